//go:build linux

package collectors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/kernlog"
)

// These tests read the real kernel log of the machine they run on. As
// root, a line written to /dev/kmsg becomes a record (facility user) that
// the follower then reads; elsewhere they are skipped.

func liveKmsg(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to write records to /dev/kmsg")
	}
	f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("cannot write to /dev/kmsg: %v", err)
	}
	f.Close()
}

// inject writes one record. Each write opens the device anew: the kernel
// rate-limits writers per open file (printk_devkmsg=ratelimit, 10 per 5 s).
func inject(t *testing.T, line string) {
	t.Helper()
	f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Fatalf("inject %q: %v", line, err)
	}
}

func liveTag(name string) string {
	return name + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// Records from before the follower started are not published; those after
// are, folded per disk; cancelling ctx ends the blocked read at once.
func TestKernelLogLiveSeekToEnd(t *testing.T) {
	liveKmsg(t)
	tag := liveTag("seek")
	k := testFollower(tag, nil)
	k.UserRecords = true
	inject(t, "<3>zwatch-test-"+tag+": media_error block sdq\n")
	f, err := openKmsg("/dev/kmsg")
	if err != nil {
		t.Fatal(err)
	}
	inject(t, "<3>zwatch-test-"+tag+": link_reset block vda\n")
	inject(t, "<3>zwatch-test-"+tag+": link_reset block vda\n")
	pub := &memPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.follow(ctx, f, newKernelFold(ctx, k, pub)) }()
	d := waitFacts(t, pub, 1, 5*time.Second)[0]
	if len(d.Disks) != 1 || d.Disks[0].Ref != "vda" || d.Disks[0].Counts["link_reset"] != 2 {
		t.Errorf("fact = %+v, want vda with 2 link resets and not the record from before the start", d)
	}
	if dk := d.Disks[0].Disk; dk == nil || dk.Serial != "overlayblk" {
		t.Errorf("vda = %+v, want the disk of the fixture tree %s", dk, virtioRoot)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("follow = %v after cancel", err)
		}
	case <-time.After(time.Second):
		t.Fatal("cancel did not end the blocked read")
	}
}

// Records the kernel overwrote before they were read (the read says EPIPE)
// are counted as lost from the sequence gap, and reading carries on.
func TestKernelLogLiveOverrun(t *testing.T) {
	liveKmsg(t)
	size, err := syscall.Klogctl(10, nil) // SYSLOG_ACTION_SIZE_BUFFER
	if err != nil || size <= 0 {
		t.Skipf("kernel log size unknown: %v", err)
	}
	tag := liveTag("overrun")
	k := testFollower(tag, nil)
	k.UserRecords = true
	f, err := openKmsg("/dev/kmsg")
	if err != nil {
		t.Fatal(err)
	}
	pub := &memPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fold := newKernelFold(ctx, k, pub)
	// Read the first marker so that the follower knows where it stands.
	inject(t, "<7>zwatch-test-"+tag+": link_reset block vda\n")
	buf := make([]byte, kmsgReadBuffer)
	for {
		n, err := f.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		fold.record(buf[:n], time.Now())
		if bytes.Contains(buf[:n], []byte(tag)) {
			break
		}
	}
	// Twice the ring in 100-byte records, at debug level (not to the console).
	filler := strings.Repeat("x", 60)
	n := 2*size/100 + 100
	for i := range n {
		inject(t, fmt.Sprintf("<7>zwatch-test-%s-flood: %06d %s\n", tag, i, filler))
	}
	inject(t, "<7>zwatch-test-"+tag+": io_error block vda\n")
	done := make(chan error, 1)
	go func() { done <- k.follow(ctx, f, fold) }()
	deadline := time.Now().Add(10 * time.Second)
	var lost uint64
	for {
		ioErr := 0
		lost = 0
		for _, d := range waitFacts(t, pub, 1, time.Until(deadline)) {
			lost += d.Lost
			for _, e := range d.Disks {
				ioErr += e.Counts["io_error"]
			}
		}
		if ioErr > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the record after the overrun was not read")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if lost < uint64(n/2) || lost > uint64(n) {
		t.Errorf("lost = %d, want between %d and %d (%d records written over a %d-byte ring)", lost, n/2, n, n, size)
	}
	t.Logf("%d records written over a %d-byte ring: %d reported lost", n, size, lost)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("follow = %v", err)
	}
}

// The idle cost of following a quiet kernel log: CPU time of this process
// over ZWATCH_IDLE_SECONDS without the follower, then with it (not run by
// default).
func TestKernelLogIdleCPU(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("ZWATCH_IDLE_SECONDS"))
	if secs <= 0 {
		t.Skip("set ZWATCH_IDLE_SECONDS to measure")
	}
	span := time.Duration(secs) * time.Second
	before := cpuTicks(t)
	time.Sleep(span)
	baseline := cpuTicks(t) - before
	f, err := openKmsg("/dev/kmsg")
	if err != nil {
		t.Skip(err)
	}
	k := &KernelLog{Path: "/dev/kmsg", Root: "/", Log: discard()}
	ctx, cancel := context.WithCancel(context.Background())
	pub := &memPublisher{}
	done := make(chan error, 1)
	go func() { done <- k.follow(ctx, f, newKernelFold(ctx, k, pub)) }()
	time.Sleep(time.Second) // past the start-up (sysfs read)
	before = cpuTicks(t)
	time.Sleep(span)
	following := cpuTicks(t) - before
	cancel()
	<-done
	t.Logf("CPU ticks (1/100 s, user+system) over %d s: %d without the follower, %d following /dev/kmsg (%d kernel.log facts)",
		secs, baseline, following, len(pub.all()))
}

// cpuTicks is utime+stime of this process, in clock ticks.
func cpuTicks(t *testing.T) int {
	p, err := procfs.Self()
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return int(s.UTime + s.STime)
}

// The messages of the QEMU read-error capture, written to this machine's
// kernel log with their levels, are read back, classified by the real
// classifier and folded: the whole path from the device to the fact.
func TestKernelLogLiveCapturedLines(t *testing.T) {
	liveKmsg(t)
	records := capturedRecords(t, "l4-read-errors.kmsg.txt")
	k := &KernelLog{Path: "/dev/kmsg", Root: "/", Log: discard(), UserRecords: true,
		Quiet: 20 * time.Millisecond, Every: 200 * time.Millisecond}
	f, err := openKmsg(k.Path)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, r := range records {
		rec, err := kernlog.ParseKmsg(r)
		if err != nil {
			t.Fatal(err)
		}
		if fd, ok := kernlog.Classify(rec.Message); ok && fd.Ref.Name == "sda" {
			want++
		}
		inject(t, fmt.Sprintf("<%d>%s\n", rec.Priority, rec.Message))
	}
	pub := &timedPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.follow(ctx, f, newKernelFold(ctx, k, pub)) }()
	d := waitFacts(t, &pub.memPublisher, 1, 5*time.Second)[0]
	cancel()
	<-done
	got := 0
	for _, e := range d.Disks {
		if e.Ref == "sda" {
			for _, n := range e.Counts {
				got += n
			}
		}
	}
	if got != want || want == 0 {
		t.Errorf("sda: %d findings read back, %d written: %+v", got, want, d)
	}
	// The envelope BusPublisher would send, for the docs' example.
	env, err := bus.Wrap(facts.KernelLog.Name(), "nas1", KernelLogName, pub.at[0], d)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_ = json.Indent(&out, env, "", "  ")
	t.Logf("the fact: %s", out.Bytes())
}

// A burst in the live log beyond the per-second cap: every record is
// either counted or dropped, and no more are counted than the cap allows.
func TestKernelLogLiveBurst(t *testing.T) {
	liveKmsg(t)
	tag := liveTag("burst")
	k := testFollower(tag, nil)
	k.UserRecords, k.MaxPerSecond = true, 100
	f, err := openKmsg("/dev/kmsg")
	if err != nil {
		t.Fatal(err)
	}
	pub := &memPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- k.follow(ctx, f, newKernelFold(ctx, k, pub)) }()
	const burst = 1000
	start := time.Now()
	for range burst {
		inject(t, "<7>zwatch-test-"+tag+": link_reset block vda\n")
	}
	var counted, dropped uint64
	deadline := time.Now().Add(10 * time.Second)
	for counted+dropped < burst && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		counted, dropped = 0, 0
		for _, d := range waitFacts(t, pub, 0, 0) {
			dropped += d.Dropped
			for _, e := range d.Disks {
				counted += uint64(e.Counts["link_reset"])
			}
		}
	}
	elapsed := time.Since(start)
	cancel()
	<-done
	limit := uint64(k.MaxPerSecond) * uint64(elapsed/time.Second+1)
	if counted+dropped != burst || counted > limit || dropped == 0 {
		t.Errorf("%d counted + %d dropped of %d in %s, want all accounted for and at most %d counted", counted, dropped, burst, elapsed, limit)
	}
	t.Logf("%d records in %s: %d counted, %d dropped", burst, elapsed.Round(time.Millisecond), counted, dropped)
}

// Without CAP_SYSLOG (kernel.dmesg_restrict=1) the kernel refuses to open
// the log: one denied collector.error with the fix. Run as an unprivileged
// user to see it (as root it is skipped).
func TestKernelLogLiveDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may read the kernel log")
	}
	if f, err := os.Open("/dev/kmsg"); err == nil {
		f.Close()
		t.Skip("this user may read the kernel log (kernel.dmesg_restrict=0)")
	}
	pub := &memPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&KernelLog{Path: "/dev/kmsg", Log: discard()}).Run(ctx, pub) }()
	deadline := time.Now().Add(2 * time.Second)
	for len(pub.all()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	msgs := pub.all()
	if len(msgs) != 1 {
		t.Fatalf("published %+v, want one collector.error", msgs)
	}
	if ce := msgs[0].data.(facts.CollectorErrorData); ce.Kind != "denied" || ce.Fix != kmsgFix {
		t.Errorf("collector error = %+v", ce)
	}
	t.Logf("%+v", msgs[0].data)
}
