package provision

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// roundTrip encodes the report as the CLI does and decodes it again, so
// that the tests read what a script reads.
func roundTrip(t *testing.T, rep *Report) Report {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// The report of a new pool has exactly the steps --apply runs and the
// lines the text form prints, and changes nothing.
func TestPlanReportRaidz2(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	p := mustPlan(t, "raidz2-six.yaml")
	rep, err := PlanReport(context.Background(), Options{Plan: p, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if ch := h.changes(); len(ch) != 0 {
		t.Errorf("the report changed the host: %q", joinAll(ch))
	}
	r := roundTrip(t, rep)
	if r.Pool != "vault" || r.Exists || !r.Ready || len(r.Disks) != 6 || !strings.HasPrefix(r.Layout, "raidz2 of 6") || r.AlreadyProvisioned || r.LayoutDiffers {
		t.Fatalf("report %+v", r)
	}
	if r.Disks[0].ID.ByID != "/dev/disk/by-id/ata-ST4000VN000-1H4168_Z300P70F" || r.Disks[1].Ref.Name != "/dev/sdg" || r.Disks[1].Ref.Path != "vdevs[0].disks[1]" {
		t.Errorf("disks %+v", r.Disks[:2])
	}
	for _, c := range r.Checks {
		if c.Status == Fail {
			t.Errorf("check failed: %+v", c)
		}
	}
	// Run with --apply on the same fixture runs these argv, in order.
	applied := loadHost(t, "hdidle-nas")
	if err := Run(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Apply: true, Yes: true, Host: applied}); err != nil {
		t.Fatal(err)
	}
	var argv []string
	for _, s := range r.Steps {
		argv = append(argv, strings.Join(s.Argv, " "))
		if s.Command == "" || s.File != nil {
			t.Errorf("step %+v", s)
		}
	}
	if want := joinAll(applied.changes()); !slices.Equal(argv, want) {
		t.Errorf("steps\n%s\nwant what --apply runs\n%s", strings.Join(argv, "\n"), strings.Join(want, "\n"))
	}
	if r.Steps[0].Why != "create the pool with stable by-id names" || !strings.HasPrefix(r.Steps[0].Command, "zpool create -o ashift=12 ") {
		t.Errorf("first step %+v", r.Steps[0])
	}
	if !strings.Contains(r.WatchConfig, "    - device: /dev/disk/by-id/ata-ST4000VN000-1H4168_Z300P70F\n") {
		t.Errorf("watch config:\n%s", r.WatchConfig)
	}
}

// An encrypted plan: the key steps and the unit file, with its content
// and mode; nothing secret is in a plan.
func TestPlanReportEncryptedMirror(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	rep, err := PlanReport(context.Background(), Options{Plan: mustPlan(t, "ssd-mirror-encrypted.yaml"), Host: h})
	if err != nil {
		t.Fatal(err)
	}
	r := roundTrip(t, rep)
	var unit *StepReport
	for i, s := range r.Steps {
		if s.File != nil {
			unit = &r.Steps[i]
		}
	}
	if unit == nil || unit.File.Path != UnitPath || unit.File.Mode != "0644" || unit.File.Content != LoadKeyUnit || len(unit.Argv) != 0 ||
		!strings.HasPrefix(unit.Command, "install -m 0644 /dev/stdin "+UnitPath) {
		t.Fatalf("unit step %+v", unit)
	}
	if r.Steps[1].Argv[0] != "dd" || !strings.Contains(r.Steps[1].Undo, "rm /etc/zfs/keys/vault.key") {
		t.Errorf("key step %+v", r.Steps[1])
	}
	if len(h.written) != 0 || len(h.changes()) != 0 {
		t.Errorf("the report changed the host")
	}
}

// A passphrase plan writes the typed passphrase at --apply: in the report
// that step is marked secret and carries no content.
func TestPlanReportPassphraseStepIsSecret(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	p := mustPlan(t, "ssd-mirror-encrypted.yaml")
	p.Encryption.Keyformat = KeyPassphrase
	rep, err := PlanReport(context.Background(), Options{Plan: p, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range roundTrip(t, rep).Steps {
		if s.Secret {
			found = true
			if s.File == nil || s.File.Content != "" || !strings.HasPrefix(s.Command, "# write the passphrase you type to ") {
				t.Errorf("secret step %+v", s)
			}
		}
	}
	if !found {
		t.Error("no secret step")
	}
}

func TestPlanReportChecksFailed(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	p := mustPlan(t, "ssd-mirror-encrypted.yaml")
	p.Vdevs[0].Disks = append(p.Vdevs[0].Disks, "sdzz")
	rep, err := PlanReport(context.Background(), Options{Plan: p, Host: h})
	if !errors.Is(err, ErrChecksFailed) || rep == nil || rep.Ready || len(rep.Steps) != 0 {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	if _, err := PlanReport(context.Background(), Options{Plan: p, Host: h, Apply: true}); err == nil {
		t.Error("a report with Apply")
	}
}

// For a pool that exists the report is the comparison: what differs and
// the commands that fix the datasets (TestReconcileExistingPool's fixture).
func TestPlanReportExistingPool(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	zget := "vault\tacltype\tposixacl\nvault\tatime\toff\nvault\tcompression\tlz4\nvault\tmountpoint\t/vault\nvault\trecordsize\t131072\nvault\txattr\tsa\n" +
		"vault/pictures\tcompression\tlz4\nvault/pictures\tmountpoint\t/srv/pictures\nvault/pictures\trecordsize\t1048576\n" +
		"vault/backup\tcompression\tlz4\nvault/backup\trecordsize\t131072\n"
	h.cmds = append([]canned{
		{pattern: "zpool list -H -o name", stdout: []byte("vault\n")},
		{pattern: "zfs get -H -p -o name,property,value -r -t filesystem acltype,atime,compression,mountpoint,recordsize,xattr vault", stdout: []byte(zget)},
	}, h.cmds...)
	rep, err := PlanReport(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Host: h})
	if err != nil {
		t.Fatal(err)
	}
	r := roundTrip(t, rep)
	if !r.Exists || !r.AlreadyProvisioned || r.LayoutDiffers || !r.Ready || r.WatchConfig != "" {
		t.Fatalf("report %+v", r)
	}
	wantDiff := []string{"vault/storage: missing", "vault/backup: compression is lz4, plan says zstd-1"}
	var argv []string
	for _, s := range r.Steps {
		argv = append(argv, s.Command)
	}
	if !slices.Equal(r.Differences, wantDiff) || !slices.Equal(argv, []string{"zfs create vault/storage", "zfs set compression=zstd-1 vault/backup"}) {
		t.Errorf("differences %q, steps %q", r.Differences, argv)
	}
	if len(h.changes()) != 0 {
		t.Errorf("the report changed the host: %q", joinAll(h.changes()))
	}
}

func TestPlanReportLayoutDiffers(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	h.cmds = append([]canned{
		{pattern: "zpool list -H -o name", stdout: []byte("vault\n")},
		{pattern: "zfs get *", stdout: []byte("")},
	}, h.cmds...)
	p := mustPlan(t, "ssd-mirror-encrypted.yaml")
	p.Vdevs[0].Disks = []string{"sda", "nvme0n1"}
	rep, err := PlanReport(context.Background(), Options{Plan: p, Host: h})
	if !errors.Is(err, ErrDiffers) || rep == nil || !rep.LayoutDiffers || rep.Ready || rep.AlreadyProvisioned {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}
