package collectors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/kernlog"
)

// The fold tests feed raw /dev/kmsg records through the follower's own
// parsing and folding. Their messages are test markers, not kernel lines:
// markerClassify reads "zwatch-test-<tag>: <kind> <ref kind> <ref name>",
// so that records other programs write to the same kernel log during a
// live test are ignored like any line zwatch does not understand.

// markerClassify recognises the markers of one tag.
func markerClassify(tag string) func(string) (kernlog.Finding, bool) {
	prefix := "zwatch-test-" + tag + ": "
	return func(msg string) (kernlog.Finding, bool) {
		rest, ok := strings.CutPrefix(msg, prefix)
		f := strings.Fields(rest)
		if !ok || len(f) != 3 {
			return kernlog.Finding{}, false
		}
		return kernlog.Finding{Kind: kernlog.Kind(f[0]), Ref: kernlog.Ref{Kind: f[1], Name: f[2]}, Sector: -1}, true
	}
}

// rawRecord frames msg the way /dev/kmsg returns a record: "PRI,SEQ,USEC,FLAGS;MESSAGE\n".
func rawRecord(pri int, seq uint64, msg string) []byte {
	return fmt.Appendf(nil, "%d,%d,%d,-;%s\n", pri, seq, 1000+seq, msg)
}

// virtioRoot is the Firecracker sysfs capture: one virtio disk, vda,
// serial overlayblk (testdata/sysfs/SOURCES.md).
const virtioRoot = "../testdata/sysfs/firecracker-virtio-vda"

// urgentLog records the SMART reads the follower asks for.
type urgentLog struct {
	mu      sync.Mutex
	targets []string
}

func (u *urgentLog) ask(target string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.targets = append(u.targets, target)
}

func (u *urgentLog) all() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.targets...)
}

// testFollower is a follower on the Firecracker tree with short timings.
func testFollower(tag string, u *urgentLog) *KernelLog {
	k := &KernelLog{Path: "/dev/kmsg", Root: virtioRoot, Log: discard(), Classify: markerClassify(tag),
		Quiet: 20 * time.Millisecond, Every: 200 * time.Millisecond}
	if u != nil {
		k.Urgent = u.ask
	}
	return k
}

// waitFacts waits until pub holds n kernel.log facts and returns them.
func waitFacts(t *testing.T, pub *memPublisher, n int, within time.Duration) []facts.KernelLogData {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var out []facts.KernelLogData
		for _, m := range pub.all() {
			if m.kind == facts.KernelLog.Name() {
				out = append(out, m.data.(facts.KernelLogData))
			}
		}
		if len(out) >= n || time.Now().After(deadline) {
			if len(out) < n {
				t.Fatalf("got %d kernel.log facts in %s, want %d: %+v", len(out), within, n, out)
			}
			return out
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func entryFor(t *testing.T, d facts.KernelLogData, ref string) facts.KernelDiskLog {
	t.Helper()
	for _, e := range d.Disks {
		if e.Ref == ref {
			return e
		}
	}
	t.Fatalf("no entry for %s in %+v", ref, d.Disks)
	return facts.KernelDiskLog{}
}

// Records about one disk fold into one entry with counts by kind, the
// disk named from sysfs; a disk name or NVMe controller that maps to
// nothing is kept by name; a port that carries no disk, a virtual device,
// what is not understood and what a program (not the kernel) wrote are
// only counted as ignored. SMART is asked for once per disk and fact.
func TestKernelFoldCountsPerDisk(t *testing.T) {
	u := &urgentLog{}
	pub := &memPublisher{}
	fold := newKernelFold(context.Background(), testFollower("fold", u), pub)
	now := time.Now()
	for i, msg := range []string{
		"zwatch-test-fold: link_reset block vda",
		"zwatch-test-fold: link_reset block vda",
		"zwatch-test-fold: io_error block vda1",
		"zwatch-test-fold: timeout nvme nvme7",
		"a line the classifier does not know",
		"zwatch-test-fold: link_reset usb 1-1",  // a USB device that carries no disk
		"zwatch-test-fold: link_down ata ata5",  // an empty SATA port
		"zwatch-test-fold: io_error block dm-3", // not a disk; its disk logs its own
	} {
		fold.record(rawRecord(3, uint64(10+i), msg), now)
	}
	fold.record(rawRecord(1<<3|3, 23, "zwatch-test-fold: io_error block vda"), now) // facility user
	fold.record([]byte("not a kmsg record"), now)
	d := waitFacts(t, pub, 1, 2*time.Second)[0]
	if d.Source != "kmsg" || d.Ignored != 6 || d.Lost != 5 || d.Dropped != 0 || len(d.Disks) != 2 {
		t.Fatalf("fact = %+v, want 2 disks, 6 ignored, 5 lost (seq 18 to 22)", d)
	}
	vda := entryFor(t, d, "vda")
	if vda.Disk == nil || vda.Disk.Serial != "overlayblk" || vda.Counts["link_reset"] != 2 || vda.Counts["io_error"] != 1 {
		t.Errorf("vda = %+v, want the disk with 2 link resets and 1 I/O error", vda)
	}
	if len(vda.Examples) != 2 || vda.First.IsZero() || vda.Last.Before(vda.First) {
		t.Errorf("vda examples/times = %q %v %v", vda.Examples, vda.First, vda.Last)
	}
	if nv := entryFor(t, d, "nvme7"); nv.Disk != nil || nv.Counts["timeout"] != 1 {
		t.Errorf("nvme7 = %+v, want it by name only", nv)
	}
	if got := u.all(); len(got) != 1 || got[0] != "vda" {
		t.Errorf("urgent SMART reads = %q, want [vda]", got)
	}
	fold.mu.Lock()
	idle := fold.timer == nil
	fold.mu.Unlock()
	if !idle {
		t.Error("a timer is still armed after the fact: the quiet log must cost nothing")
	}
}

// Beyond the per-second cap findings are counted as dropped; other lines
// do not count against the cap.
func TestKernelFoldRateLimit(t *testing.T) {
	pub := &memPublisher{}
	k := testFollower("rate", nil)
	k.MaxPerSecond = 10
	fold := newKernelFold(context.Background(), k, pub)
	now := time.Now()
	for i := range 100 {
		fold.record(rawRecord(3, uint64(i+1), "a line about something else"), now)
	}
	for i := range 100 {
		fold.record(rawRecord(3, uint64(101+i), "zwatch-test-rate: link_reset nvme nvme9"), now)
	}
	fold.record(rawRecord(3, 201, "zwatch-test-rate: link_reset nvme nvme9"), now.Add(time.Second))
	d := waitFacts(t, pub, 1, 2*time.Second)[0]
	if d.Dropped != 90 || d.Ignored != 100 || len(d.Disks) != 1 || d.Disks[0].Counts["link_reset"] != 11 {
		t.Errorf("fact = %+v, want 11 counted, 90 dropped and the 100 other lines ignored (not counted against the cap)", d)
	}
}

// At most kernelMaxDisks entries per fact, kernelExamples examples each,
// each example at most kernelExampleMax bytes.
func TestKernelFoldBounds(t *testing.T) {
	pub := &memPublisher{}
	fold := newKernelFold(context.Background(), testFollower("bounds", nil), pub)
	now := time.Now()
	for i := range kernelMaxDisks + 36 {
		fold.record(rawRecord(3, uint64(i+1), fmt.Sprintf("zwatch-test-bounds: io_error block sdq%d", i)), now)
	}
	long := strings.Repeat("é", kernelExampleMax)
	for i := range 10 {
		fold.record(rawRecord(3, uint64(200+i), fmt.Sprintf("zwatch-test-bounds: io_error block sdq0 %d%s", i, long)), now)
	}
	d := waitFacts(t, pub, 1, 2*time.Second)[0]
	if len(d.Disks) != kernelMaxDisks || d.Dropped != 36 {
		t.Fatalf("%d disks, %d dropped; want %d and 36", len(d.Disks), d.Dropped, kernelMaxDisks)
	}
	for _, e := range d.Disks {
		if len(e.Examples) > kernelExamples {
			t.Errorf("%s keeps %d examples", e.Ref, len(e.Examples))
		}
		for _, ex := range e.Examples {
			if len(ex) > kernelExampleMax || !strings.HasPrefix(ex, "zwatch-test-bounds") {
				t.Errorf("%s example of %d bytes: %.40q", e.Ref, len(ex), ex)
			}
		}
	}
}

// timedPublisher records when each kernel.log fact came.
type timedPublisher struct {
	memPublisher
	at []time.Time
}

func (p *timedPublisher) Publish(ctx context.Context, kind, collector string, data any, extra ...string) error {
	p.mu.Lock()
	p.at = append(p.at, time.Now())
	p.mu.Unlock()
	return p.memPublisher.Publish(ctx, kind, collector, data, extra...)
}

// A fact comes Quiet after the first record of a spell, then at most every
// Every while records keep coming, and together they count every record.
func TestKernelFoldTiming(t *testing.T) {
	pub := &timedPublisher{}
	k := testFollower("timing", nil)
	fold := newKernelFold(context.Background(), k, pub)
	start := time.Now()
	records := 0
	for time.Since(start) < 500*time.Millisecond {
		records++
		fold.record(rawRecord(3, uint64(records), "zwatch-test-timing: link_reset block sdq"), time.Now())
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(k.Every + 100*time.Millisecond)
	got := waitFacts(t, &pub.memPublisher, 1, 0)
	total := 0
	for _, d := range got {
		total += d.Disks[0].Counts["link_reset"]
	}
	if total != records {
		t.Errorf("facts count %d records, %d were read", total, records)
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	if first := pub.at[0].Sub(start); first < k.Quiet || first > k.Every {
		t.Errorf("first fact after %s, want about %s", first, k.Quiet)
	}
	for i := 1; i < len(pub.at); i++ {
		if gap := pub.at[i].Sub(pub.at[i-1]); gap < k.Every-5*time.Millisecond {
			t.Errorf("fact %d came %s after the previous, want at least %s", i, gap, k.Every)
		}
	}
	if n := len(pub.at); n < 2 || n > 5 {
		t.Errorf("%d facts for 500 ms of records", n)
	}
}

// An overrun before any record was read loses an unknown number: at
// least one is reported.
func TestKernelFoldOverrunFirst(t *testing.T) {
	pub := &memPublisher{}
	fold := newKernelFold(context.Background(), testFollower("overrun", nil), pub)
	fold.overrun()
	fold.record(rawRecord(6, 500, "ordinary line"), time.Now())
	if d := waitFacts(t, pub, 1, 2*time.Second)[0]; d.Lost != 1 || len(d.Disks) != 0 {
		t.Errorf("fact = %+v, want 1 lost and no disks", d)
	}
}

// A log this process may not read, or that is not there, is one
// collector.error with the fix; the follower then waits for ctx.
func TestKernelLogBlindSpot(t *testing.T) {
	pub := &memPublisher{}
	k := &KernelLog{Path: filepath.Join(t.TempDir(), "kmsg"), Log: discard()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx, pub) }()
	deadline := time.Now().Add(2 * time.Second)
	for len(pub.all()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned %v before ctx ended: the daemon would restart it in a loop", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v after cancel", err)
	}
	msgs := pub.all()
	if len(msgs) != 1 || msgs[0].kind != facts.CollectorError.Name() {
		t.Fatalf("published %+v, want one collector.error", msgs)
	}
	ce := msgs[0].data.(facts.CollectorErrorData)
	if ce.Kind != execx.KindMissing || ce.Collector != KernelLogName || ce.Fix != kmsgFix || !strings.Contains(ce.Message, k.Path) {
		t.Errorf("collector error = %+v", ce)
	}
	for _, errno := range []syscall.Errno{syscall.EACCES, syscall.EPERM} {
		ce, blind := kmsgBlindSpot("/dev/kmsg", &os.PathError{Op: "open", Path: "/dev/kmsg", Err: errno})
		if !blind || ce.Kind != execx.KindDenied {
			t.Errorf("%v: %+v, %v; want a denied blind spot", errno, ce, blind)
		}
	}
	if _, blind := kmsgBlindSpot("/dev/kmsg", errors.New("EIO")); blind {
		t.Error("an I/O error is not a blind spot; the daemon restarts the follower")
	}
}

// The table line: Linux only, no family, kernel.enabled switches it, and
// it asks SMART and the disk inventory.
func TestKernelLogTableLine(t *testing.T) {
	cfg := config.Default()
	for _, s := range Table() {
		if s.Name != KernelLogName {
			continue
		}
		if s.Family.Name != "" || len(s.Platforms) != 1 || s.Platforms[0] != "linux" || s.Follow == nil {
			t.Fatalf("spec = %+v", s)
		}
		if !s.Enabled(&cfg) {
			t.Error("the kernel log is on by default")
		}
		off := cfg
		off.Kernel.Enabled = false
		if s.Enabled(&off) {
			t.Error("kernel.enabled: false must switch it off")
		}
		var urgent, poked []string
		env := Env{Config: &cfg, Log: discard(),
			Poke:   func(name string) func() { poked = append(poked, name); return func() {} },
			Urgent: func(name string) func(string) { urgent = append(urgent, name); return func(string) {} }}
		k := s.Follow(env).(*KernelLog)
		if k.Path != "/dev/kmsg" || k.Urgent == nil || k.DisksChanged == nil || k.UserRecords {
			t.Errorf("built %+v", k)
		}
		if len(urgent) != 1 || urgent[0] != SmartCollectorName || len(poked) != 1 || poked[0] != disksCollector {
			t.Errorf("asks urgent %q, pokes %q", urgent, poked)
		}
		if k := s.Follow(Env{Config: &cfg}).(*KernelLog); k.Urgent != nil || k.DisksChanged != nil {
			t.Error("without Urgent and Poke (tests) it must ask nobody")
		}
		return
	}
	t.Fatal("no kernel log line in the table")
}

// The cost of a record that says nothing about a disk (most of the log):
// parse, classify, count.
func BenchmarkKernelFoldIgnored(b *testing.B) {
	fold := newKernelFold(context.Background(), &KernelLog{Root: virtioRoot}, &memPublisher{})
	// A record verbatim from the QEMU capture l1-scsi-unplug.kmsg.txt.
	rec := []byte("4,674,89975346,-;sd 0:0:1:0: LUN assignments on this target have changed. The Linux SCSI layer does not automatically remap LUN assignments.\n SUBSYSTEM=scsi\n DEVICE=+scsi:0:0:1:0\n")
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		fold.record(rec, now)
	}
	if len(fold.disks) != 0 {
		b.Fatal("the record was taken for a finding; the benchmark is of the lines that are not")
	}
}

// Any bytes a read of /dev/kmsg may return go through parsing,
// classification and the fold without a panic, and the fact stays within
// its bounds. The seeds are the QEMU captures' records.
func FuzzKernelFoldRecord(f *testing.F) {
	files, _ := filepath.Glob("../testdata/captured/zfs-2.3.2/*.kmsg.txt")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if line != "" && line[0] != ' ' {
				f.Add([]byte(line))
			}
		}
	}
	f.Add(rawRecord(3, 1, "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2"))
	f.Add([]byte("6,1,1,-;" + strings.Repeat("\\x41", 3000) + "\n DEVICE=b8:0\n"))
	pub := &memPublisher{}
	fold := newKernelFold(context.Background(), &KernelLog{Root: virtioRoot, Log: discard(), Quiet: time.Hour}, pub)
	f.Fuzz(func(t *testing.T, b []byte) {
		fold.record(b, time.Now())
		fold.mu.Lock()
		n := len(fold.disks)
		for _, e := range fold.disks {
			if len(e.Examples) > kernelExamples {
				t.Fatalf("%d examples", len(e.Examples))
			}
			for _, ex := range e.Examples {
				if len(ex) > kernelExampleMax {
					t.Fatalf("example of %d bytes", len(ex))
				}
			}
		}
		fold.mu.Unlock()
		if n > kernelMaxDisks {
			t.Fatalf("%d disks in one fact", n)
		}
	})
}

// The records that make the follower learn a new disk's names before it
// logs an error. Derived from the kernel's format strings (not captured
// lines): sd.c "Attached SCSI %sdisk", virtio_blk.c "[%s] %llu %d-byte
// logical blocks", nvme/host/pci.c "%d/%d/%d default/read/poll queues".
func TestAnnouncesDisk(t *testing.T) {
	for _, msg := range []string{
		"sd 0:0:7:0: [sdh] Attached SCSI disk",
		"sd 6:0:0:0: [sdc] Attached SCSI removable disk",
		"virtio_blk virtio5: [vdc] 1048576 512-byte logical blocks (537 MB/512 MiB)",
		"nvme nvme1: 2/0/0 default/read/poll queues",
	} {
		if !announcesDisk(msg) {
			t.Errorf("%q: not taken for a new disk", msg)
		}
	}
	// A record verbatim from the QEMU capture l1-scsi-unplug.kmsg.txt.
	if announcesDisk("sd 0:0:1:0: LUN assignments on this target have changed. The Linux SCSI layer does not automatically remap LUN assignments.") {
		t.Error("an unrelated sd line taken for a new disk")
	}
}
