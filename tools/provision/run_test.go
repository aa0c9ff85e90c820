package provision

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./provision -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %q\nwant: %q\n(run go test ./provision -update if the change is intended)", path, i+1, g, w)
			}
		}
	}
}

func mustPlan(t *testing.T, name string) *Plan {
	t.Helper()
	p, err := LoadPlan(filepath.Join("testdata", "plans", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGoldenPlanRaidz2(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Out: &out, Host: h})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	golden(t, "plan-raidz2-six", out.Bytes())
	if ch := h.changes(); len(ch) != 0 {
		t.Errorf("plan mode changed the host: %q", joinAll(ch))
	}
}

func TestGoldenPlanEncryptedMirror(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: mustPlan(t, "ssd-mirror-encrypted.yaml"), Out: &out, Host: h})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	golden(t, "plan-ssd-mirror-encrypted", out.Bytes())
	if ch := h.changes(); len(ch) != 0 || len(h.written) != 0 {
		t.Errorf("plan mode changed the host: %q %v", joinAll(ch), h.written)
	}
}

func TestApplyRaidz2ExactArgv(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Apply: true, Yes: true, Out: &out, Host: h})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	id := "/dev/disk/by-id/ata-ST4000VN000-1H4168_"
	want := []string{
		"zpool create -o ashift=12 -O acltype=posixacl -O atime=off -O compression=lz4 -O xattr=sa vault raidz2 " +
			id + "Z300P70F " + id + "Z30147EP " + id + "Z30139FG " + id + "Z30135GV " + id + "Z300TE47 " + id + "Z301395T",
		"zfs create -o compression=lz4 -o recordsize=1M -o mountpoint=/srv/pictures vault/pictures",
		"zfs create vault/storage",
		"zfs create -o compression=zstd-1 vault/backup",
	}
	got := joinAll(h.changes())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("argv run:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	last := h.calls[len(h.calls)-1]
	if strings.Join(last, " ") != "zpool status -P vault" {
		t.Errorf("last command %q, want the verification zpool status -P vault", last)
	}
	for _, s := range []string{"Verified (zpool status -P vault): ONLINE", "- device: " + id + "Z300P70F"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}

func TestApplyEncryptedMirrorExactArgv(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: mustPlan(t, "ssd-mirror-encrypted.yaml"), Apply: true, Yes: true, Out: &out, Host: h})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	id := "/dev/disk/by-id/ata-SanDisk_SDSSDXPS480G_"
	want := []string{
		"install -d -m 0700 /etc/zfs/keys",
		"dd if=/dev/urandom of=/etc/zfs/keys/vault.key bs=32 count=1 iflag=fullblock conv=excl status=none",
		"chmod 0600 /etc/zfs/keys/vault.key",
		"zpool create -o ashift=12 -o autotrim=on -O acltype=posixacl -O atime=off -O compression=lz4 -O encryption=aes-256-gcm -O keyformat=raw -O keylocation=file:///etc/zfs/keys/vault.key -O xattr=sa vault mirror " + id + "152271401093 " + id + "154501401266",
		"zfs create vault/documents",
		"zfs create -o recordsize=1M vault/photos",
		"systemctl daemon-reload",
		"systemctl enable zfs-load-key@vault.service",
	}
	got := joinAll(h.changes())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("argv run:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	unit, ok := h.written[UnitPath]
	if !ok || string(unit.data) != LoadKeyUnit || unit.perm != 0o644 {
		t.Errorf("unit file not written as expected: %+v", h.written)
	}
	for _, s := range []string{"BACK UP THE KEY", "/etc/zfs/keys/vault.key", "Verified"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q", s)
		}
	}
}

func TestApplyHalfWayFailureAccount(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	h.failOn = "zfs create vault/storage"
	h.failStderr = "cannot create 'vault/storage': out of space"
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Apply: true, Yes: true, Out: &out, Host: h})
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.Step != 2 {
		t.Fatalf("want ApplyError at step 3, got %v", err)
	}
	golden(t, "apply-failure-raidz2", out.Bytes())
	// Nothing after the failure ran, and zwatch ran no undo.
	for _, c := range h.changes() {
		j := strings.Join(c, " ")
		if strings.Contains(j, "vault/backup") || strings.HasPrefix(j, "zpool destroy") {
			t.Errorf("ran %q after the failure", j)
		}
	}
	if !strings.Contains(out.String(), "zpool destroy vault    # only while it is empty: it was created by this run") {
		t.Errorf("account lacks the printed undo")
	}
}

func TestApplyRefusedOnFail(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	p := mustPlan(t, "raidz2-six.yaml")
	p.Vdevs[0].Disks[5] = "sdb" // mounted, swap, signatures
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: p, Apply: true, Yes: true, Out: &out, Host: h})
	if !errors.Is(err, ErrChecksFailed) {
		t.Fatalf("want ErrChecksFailed, got %v", err)
	}
	if ch := h.changes(); len(ch) != 0 {
		t.Errorf("changed the host despite FAIL: %q", joinAll(ch))
	}
}

func TestApplyNeedsConfirmation(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Apply: true, In: strings.NewReader("tank\n"), Out: &out, Host: h})
	if !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("want ErrNotConfirmed, got %v", err)
	}
	if len(h.changes()) != 0 {
		t.Error("changed the host without confirmation")
	}
	h = loadHost(t, "hdidle-nas")
	err = Run(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Apply: true, In: strings.NewReader("vault\n"), Out: &out, Host: h})
	if err != nil || len(h.changes()) != 4 {
		t.Fatalf("confirmed run: %v, %d changes", err, len(h.changes()))
	}
}

func TestApplyWipeAndPassphrase(t *testing.T) {
	h := loadHost(t, "pi-usb")
	p := &Plan{Pool: "backup", Vdevs: []VdevSpec{{Layout: LayoutMirror, Disks: []string{"sde", "sdc"}}}, Encryption: &Encryption{Keyformat: KeyPassphrase}}
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: p, Apply: true, Wipe: true, Yes: true, In: strings.NewReader("correct horse battery\ncorrect horse battery\n"), Out: &out, Host: h})
	if err == nil || !strings.Contains(out.String(), "zpool status") && !errors.Is(err, ErrVerify) {
		t.Logf("%s", out.String())
	}
	e := "/dev/disk/by-id/usb-WDC_WD40EFAX-68JH4N0_CONSTRUCTED01-0:0"
	want := []string{
		"zpool labelclear -f " + e + "-part1",
		"wipefs --all --backup " + e + "-part1",
		"wipefs --all --backup " + e,
		"install -d -m 0700 /run/zwatch-provision",
		"zpool create -o ashift=12 -O acltype=posixacl -O atime=off -O compression=lz4 -O encryption=aes-256-gcm -O keyformat=passphrase -O keylocation=file:///run/zwatch-provision/backup.passphrase -O xattr=sa backup mirror " + e + " /dev/disk/by-id/ata-WDC_WD5000LPCX-22VHAT0_WD-WXL1A176XV2U",
		"rm -f /run/zwatch-provision/backup.passphrase",
		"zfs set keylocation=prompt backup",
	}
	got := joinAll(h.changes())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("argv run:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out.String())
	}
	pf, ok := h.written["/run/zwatch-provision/backup.passphrase"]
	if !ok || string(pf.data) != "correct horse battery" || pf.perm != 0o600 {
		t.Errorf("passphrase file: %+v", h.written)
	}
	if strings.Contains(out.String(), "correct horse") {
		t.Error("the passphrase was printed")
	}
	// No canned zpool status for pool backup: verification must say so.
	if !errors.Is(err, ErrVerify) {
		t.Errorf("want ErrVerify without a zpool status, got %v", err)
	}
}

func TestReconcileExistingPool(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	// The pool exists; storage is missing and backup has another compression.
	zget := "vault\tacltype\tposixacl\nvault\tatime\toff\nvault\tcompression\tlz4\nvault\tmountpoint\t/vault\nvault\trecordsize\t131072\nvault\txattr\tsa\n" +
		"vault/pictures\tcompression\tlz4\nvault/pictures\tmountpoint\t/srv/pictures\nvault/pictures\trecordsize\t1048576\n" +
		"vault/backup\tcompression\tlz4\nvault/backup\trecordsize\t131072\n"
	h.cmds = append([]canned{
		{pattern: "zpool list -H -o name", stdout: []byte("vault\n")},
		{pattern: "zfs get -H -p -o name,property,value -r -t filesystem acltype,atime,compression,mountpoint,recordsize,xattr vault", stdout: []byte(zget)},
	}, h.cmds...)
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Out: &out, Host: h})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	golden(t, "reconcile-raidz2", out.Bytes())
	if len(h.changes()) != 0 {
		t.Errorf("compare without --apply changed the host: %q", joinAll(h.changes()))
	}
	// With --apply the non-destructive fixes run, nothing else.
	h.calls = nil
	out.Reset()
	if err := Run(context.Background(), Options{Plan: mustPlan(t, "raidz2-six.yaml"), Apply: true, Out: &out, Host: h}); err != nil {
		t.Fatal(err)
	}
	want := "zfs create vault/storage\nzfs set compression=zstd-1 vault/backup"
	if got := strings.Join(joinAll(h.changes()), "\n"); got != want {
		t.Errorf("fixes run:\n%s\nwant:\n%s", got, want)
	}
}

func TestReconcileIdentical(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	zget := "vault\tacltype\tposixacl\nvault\tatime\toff\nvault\tcompression\tlz4\nvault\tencryption\taes-256-gcm\nvault\tkeyformat\traw\nvault\tkeylocation\tfile:///etc/zfs/keys/vault.key\nvault\tmountpoint\t/vault\nvault\trecordsize\t131072\nvault\txattr\tsa\n" +
		"vault/documents\trecordsize\t131072\nvault/photos\trecordsize\t1048576\n"
	h.cmds = append([]canned{
		{pattern: "zpool list -H -o name", stdout: []byte("vault\n")},
		{pattern: "zfs get *", stdout: []byte(zget)},
	}, h.cmds...)
	var out bytes.Buffer
	if err := Run(context.Background(), Options{Plan: mustPlan(t, "ssd-mirror-encrypted.yaml"), Out: &out, Host: h}); err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Already provisioned: pool vault matches the plan") {
		t.Errorf("want already provisioned:\n%s", out.String())
	}
}

func TestReconcileLayoutDiffers(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	h.cmds = append([]canned{
		{pattern: "zpool list -H -o name", stdout: []byte("vault\n")},
		{pattern: "zfs get *", stdout: []byte("")},
	}, h.cmds...)
	p := mustPlan(t, "ssd-mirror-encrypted.yaml")
	p.Vdevs[0].Disks = []string{"sda", "nvme0n1"}
	var out bytes.Buffer
	err := Run(context.Background(), Options{Plan: p, Apply: true, Yes: true, Out: &out, Host: h})
	if !errors.Is(err, ErrDiffers) {
		t.Fatalf("want ErrDiffers, got %v\n%s", err, out.String())
	}
	if len(h.changes()) != 0 {
		t.Errorf("changed a pool whose layout differs: %q", joinAll(h.changes()))
	}
	if !strings.Contains(out.String(), "never destroys a pool") {
		t.Errorf("output:\n%s", out.String())
	}
}
