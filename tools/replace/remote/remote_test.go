package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/tools/replace"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// The pool states are real OpenZFS 2.3.2 `zpool status -j` outputs of the
// QEMU harness (testdata/captured/zfs-2.3.2, steps c1, e1, e3): raidz2
// vault with scsi-35000c500a0000001 REMOVED, resilvering onto
// wwn-0x5000c500a0000003, then ONLINE. The disk identities are derived
// from the harness's disk table (e2e/vm.sh: 1 GiB disks and their serials).
const captured = "../../../testdata/captured/zfs-2.3.2/"

const (
	removedGUID = "3518067281308411962"
	newDisk     = "/dev/disk/by-id/wwn-0x5000c500a0000003"
	wantCommand = "zpool replace vault 3518067281308411962 /dev/disk/by-id/wwn-0x5000c500a0000003"
	incidentID  = "3f2a9c1e"
)

func loadJSON(t *testing.T, step string) []*zfs.Pool {
	t.Helper()
	f, err := os.Open(filepath.Join(captured, step+".zpool-status-j.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pools, err := zfs.ParseStatusJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return pools
}

const gib = 1 << 30

func vmDisk(byID, serial, model string) disk.Identity {
	return disk.Identity{Serial: serial, Model: model, ByID: "/dev/disk/by-id/" + byID, ByIDAll: []string{"/dev/disk/by-id/" + byID},
		Kernel: serial, SizeBytes: gib, LogicalSector: 512, PhysicalSector: 512}
}

// vmDisks are vault's members that are present, fast's NVMe, and the
// spare sd3.
var vmDisks = []disk.Identity{
	vmDisk("wwn-0x5000c500a0000002", "ZWS0002", "ST4000NM0035"),
	vmDisk("virtio-ZWV0001", "ZWV0001", ""),
	vmDisk("virtio-ZWV0002", "ZWV0002", ""),
	vmDisk("ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001", "WD-WCC7K0000001", "WDC WD40EFRX-68N32N0"),
	vmDisk("ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000002", "WD-WCC7K0000002", "WDC WD40EFRX-68N32N0"),
	vmDisk("nvme-QEMU_NVMe_Ctrl_ZWNVME0001", "ZWNVME0001", "QEMU NVMe Ctrl"),
	vmDisk("nvme-QEMU_NVMe_Ctrl_ZWNVME0002", "ZWNVME0002", "QEMU NVMe Ctrl"),
	vmDisk("wwn-0x5000c500a0000003", "ZWS0003", "ST4000NM0035"),
}

// box is the machine: zpool status moves from c1 to resilvering (e1) once
// zpool replace has run, then to e3 after two reads.
type box struct {
	t        *testing.T
	mu       sync.Mutex
	before   []*zfs.Pool
	during   []*zfs.Pool
	after    []*zfs.Pool
	replaced []string
	reads    int
	usage    map[string]replace.Usage
}

func newBox(t *testing.T) *box {
	return &box{t: t, before: loadJSON(t, "c1-removed"), during: loadJSON(t, "e1-replacing"), after: loadJSON(t, "e3-replaced")}
}

func (b *box) Status(context.Context, string) ([]*zfs.Pool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.replaced == nil {
		return b.before, nil
	}
	if b.reads++; b.reads <= 2 {
		return b.during, nil
	}
	return b.after, nil
}

func (b *box) Run(_ context.Context, name string, args ...string) (execx.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if name != "zpool" || len(args) == 0 || args[0] != "replace" {
		return execx.Result{}, errors.New("unexpected command " + name + " " + strings.Join(args, " "))
	}
	if b.replaced != nil {
		b.t.Errorf("zpool replace ran twice: %v", args)
	}
	b.replaced = append([]string{name}, args...)
	return execx.Result{}, nil
}

func (b *box) Disks(context.Context) ([]disk.Identity, error) { return vmDisks, nil }

func (b *box) Usage(_ context.Context, d disk.Identity) (replace.Usage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u, ok := b.usage[d.Kernel]; ok {
		return u, nil
	}
	return replace.Usage{Type: "disk"}, nil
}

func (b *box) commandRun() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.replaced, " ")
}

type acks struct {
	mu  sync.Mutex
	got []string
}

func (a *acks) ack(_ context.Context, incident, by, source string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, incident+" "+by+" "+source)
	return nil
}

func vaultAlerts(host string) []alert.Alert {
	m := 1
	return []alert.Alert{{Name: "VdevState", Incident: incidentID, State: alert.Firing, Severity: alert.Warning,
		Labels:      map[string]string{"host": host, "pool": "vault"},
		Replacement: &alert.Replacement{Pool: "vault", TopVdev: "raidz2-0", VdevGUID: removedGUID, VdevState: "REMOVED", Margin: &m, PoolState: "DEGRADED"}}}
}

func newService(ctx context.Context, t *testing.T, b *box, alerts []alert.Alert, a *acks) *Service {
	return &Service{
		Bus: viewtest.OpenBus(ctx, t), Host: "nas1",
		Incident: func(_ context.Context, id string) ([]alert.Alert, error) {
			if id != incidentID {
				return nil, nil
			}
			return alerts, nil
		},
		Acknowledge: a.ack, Runner: b, Status: b, Disks: b, Probe: b,
		Smart:      func(context.Context, string) (*bool, error) { return nil, nil },
		Background: ctx, Poll: time.Millisecond,
	}
}

// The whole answer: Replace asks with the exact command and the disk it
// erases; the confirmation runs zpool replace once, acknowledges the
// incident, reports the resilver to its end; the same button again, and
// Cancel after it, do nothing.
func TestAskConfirmReplace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, a := newBox(t), &acks{}
	s := newService(ctx, t, b, vaultAlerts("nas1"), a)

	out, err := s.Ask(ctx, incidentID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Text, wantCommand) || !strings.Contains(out.Text, "erases everything on it") || !strings.Contains(out.Text, "serial ZWS0003") {
		t.Errorf("question:\n%s", out.Text)
	}
	if len(out.Ask) != 2 || out.Ask[0].Label != "⚠️ Erase ZWS0003 and replace" || out.Ask[0].Action.Verb != answer.Confirm ||
		out.Ask[1].Action.Verb != answer.Cancel {
		t.Fatalf("choices %+v", out.Ask)
	}
	if b.commandRun() != "" {
		t.Fatal("asking ran zpool replace")
	}

	// Two taps on the confirmation at once: one replacement.
	var wg sync.WaitGroup
	outs, errs := make([]answer.Outcome, 2), make([]error, 2)
	for i := range outs {
		wg.Go(func() { outs[i], errs[i] = s.Confirm(ctx, out.Ask[0].Action.Incident, "@alice", "telegram:phone") })
	}
	wg.Wait()
	var started answer.Outcome
	for i := range outs {
		switch {
		case errs[i] == nil && outs[i].Progress != nil:
			if started.Progress != nil {
				t.Fatal("two confirmations both started")
			}
			started = outs[i]
		case !errors.Is(errs[i], ErrOfferGone):
			t.Errorf("second confirmation: %+v %v", outs[i], errs[i])
		}
	}
	if started.Progress == nil || !strings.Contains(started.Text, wantCommand) {
		t.Fatalf("confirmation: %+v", started)
	}
	var lines []string
	for l := range started.Progress {
		lines = append(lines, l)
	}
	s.Wait()
	if got := b.commandRun(); got != wantCommand {
		t.Errorf("ran %q, want %q", got, wantCommand)
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "✅ Replaced scsi-35000c500a0000001") {
		t.Errorf("progress: %q", lines)
	}
	if len(a.got) != 1 || a.got[0] != incidentID+" @alice telegram:phone" {
		t.Errorf("acknowledged: %q", a.got)
	}
	if _, err := s.Cancel(ctx, out.Ask[1].Action.Incident, "@alice", "telegram:phone"); !errors.Is(err, ErrOfferGone) {
		t.Errorf("cancel after the confirmation: %v", err)
	}
}

// Cancel closes the question; a question times out.
func TestCancelAndExpiry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := newBox(t)
	s := newService(ctx, t, b, vaultAlerts("nas1"), &acks{})
	out, err := s.Ask(ctx, incidentID)
	if err != nil || len(out.Ask) != 2 {
		t.Fatalf("%+v %v", out, err)
	}
	if c, err := s.Cancel(ctx, out.Ask[1].Action.Incident, "@alice", "telegram:phone"); err != nil || !strings.Contains(c.Text, "nothing was run") {
		t.Errorf("cancel: %+v %v", c, err)
	}
	if _, err := s.Confirm(ctx, out.Ask[0].Action.Incident, "@alice", "telegram:phone"); !errors.Is(err, ErrOfferGone) {
		t.Errorf("confirm after cancel: %v", err)
	}
	out, _ = s.Ask(ctx, incidentID)
	later := time.Now().Add(OfferFor + time.Second)
	s.Now = func() time.Time { return later }
	if _, err := s.Confirm(ctx, out.Ask[0].Action.Incident, "@alice", "telegram:phone"); !errors.Is(err, ErrOfferGone) {
		t.Errorf("confirm after %s: %v", OfferFor, err)
	}
	if _, err := s.Confirm(ctx, "0badc0de", "@alice", "telegram:phone"); !errors.Is(err, ErrOfferGone) {
		t.Errorf("confirm of an unknown question: %v", err)
	}
	if b.commandRun() != "" {
		t.Errorf("ran %q", b.commandRun())
	}
}

// What changed between the question and the answer is checked again: a
// disk that got a partition table meanwhile is not written to.
func TestConfirmChecksAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := newBox(t)
	s := newService(ctx, t, b, vaultAlerts("nas1"), &acks{})
	out, err := s.Ask(ctx, incidentID)
	if err != nil || len(out.Ask) != 2 {
		t.Fatalf("%+v %v", out, err)
	}
	b.mu.Lock()
	b.usage = map[string]replace.Usage{"ZWS0003": {Type: "disk", Partitions: []string{"sdg1"}, Signatures: []replace.Signature{{Device: "sdg1", Type: "ext4"}}}}
	b.mu.Unlock()
	c, err := s.Confirm(ctx, out.Ask[0].Action.Incident, "@alice", "telegram:phone")
	if err != nil || c.Progress != nil || !strings.HasPrefix(c.Text, "Not run: "+newDisk+" no longer qualifies") {
		t.Errorf("%+v %v", c, err)
	}
	if b.commandRun() != "" {
		t.Errorf("ran %q", b.commandRun())
	}
}

// When it is not offered, the answer says why, and nothing is asked.
func TestNotOffered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	failed := false
	for _, c := range []struct {
		name   string
		alerts []alert.Alert
		setup  func(b *box, s *Service)
		want   string
	}{
		{"another host's disk", vaultAlerts("nas2"), nil, "The disk is on nas2"},
		{"suspended", func() []alert.Alert { as := vaultAlerts("nas1"); as[0].Replacement.PoolState = "SUSPENDED"; return as }(), nil, "Pool vault is suspended"},
		{"a resilver runs", vaultAlerts("nas1"), func(b *box, _ *Service) { b.before = b.during }, "A resilver runs in pool vault"},
		{"no margin, old serves", func() []alert.Alert {
			as := vaultAlerts("nas1")
			as[0].Replacement.VdevGUID = guidOf(t, loadJSON(t, "c1-removed"), "virtio-ZWV0001")
			return as
		}(), func(b *box, _ *Service) {
			// Derived from c1: a second member gone too, so raidz2-0 has no margin left.
			_, _, l := findLeaf(poolOf(b.before, "vault"), alert.Replacement{VdevGUID: guidOf(t, b.before, "virtio-ZWV0002")})
			l.State = "FAULTED"
		}, "still serves data and raidz2-0 has no margin left"},
		{"SMART failing", vaultAlerts("nas1"), func(_ *box, s *Service) {
			no := false
			s.Smart = func(context.Context, string) (*bool, error) { return &no, nil }
		}, "SMART says the disk is FAILING"},
		{"no disk", vaultAlerts("nas1"), func(b *box, _ *Service) {
			b.usage = map[string]replace.Usage{"ZWS0003": {Type: "disk", Mounts: []string{"/srv"}}}
		}, "No disk qualifies as the new one yet. Plug in a whole, empty disk of at least 1.0 GiB"},
		{"no disk in the incident", []alert.Alert{{Name: "PoolCapacity", Incident: incidentID, Labels: map[string]string{"host": "nas1"}}}, nil, "names no pool device"},
	} {
		b := newBox(t)
		s := newService(ctx, t, b, c.alerts, &acks{})
		if c.setup != nil {
			c.setup(b, s)
		}
		out, err := s.Ask(ctx, incidentID)
		if err != nil || len(out.Ask) != 0 || !strings.Contains(out.Text, c.want) {
			t.Errorf("%s: %v, asks %d, text:\n%s", c.name, err, len(out.Ask), out.Text)
			failed = true
		}
	}
	if failed {
		return
	}
	b := newBox(t)
	s := newService(ctx, t, b, vaultAlerts("nas1"), &acks{})
	if _, err := s.Ask(ctx, "00000000"); !errors.Is(err, answer.ErrGone) {
		t.Errorf("an incident that does not fire: %v", err)
	}
}

func poolOf(pools []*zfs.Pool, name string) *zfs.Pool {
	for _, p := range pools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func guidOf(t *testing.T, pools []*zfs.Pool, byID string) string {
	t.Helper()
	for _, p := range pools {
		for _, cv := range p.AllVdevs() {
			for _, l := range cv.Vdev.Leaves() {
				if strings.Contains(l.Path, byID) || strings.Contains(l.Name, byID) {
					return l.GUID
				}
			}
		}
	}
	t.Fatalf("no leaf %s", byID)
	return ""
}

// An alert read from text zpool status names a present device by path
// only (text prints no GUID for it): the question is asked all the same,
// and the command is zwatch replace's own.
func TestAskByPath(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	as := vaultAlerts("nas1")
	as[0].Replacement.VdevGUID, as[0].Replacement.VdevPath = "", "/dev/disk/by-id/scsi-35000c500a0000001-part1"
	s := newService(ctx, t, newBox(t), as, &acks{})
	out, err := s.Ask(ctx, incidentID)
	if err != nil || len(out.Ask) != 2 || !strings.Contains(out.Text, wantCommand) {
		t.Fatalf("%+v %v", out, err)
	}
}
