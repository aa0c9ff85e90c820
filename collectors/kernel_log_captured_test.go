package collectors

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/kernlog"
)

// capturedRecords splits a capture of raw /dev/kmsg reads (one record per
// read: the "PRI,SEQ,USEC,FLAGS;MESSAGE" line and its " KEY=VALUE"
// dictionary lines) back into the reads.
func capturedRecords(t *testing.T, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata/captured/zfs-2.3.2", name))
	if err != nil {
		t.Skipf("capture not present: %v", err)
	}
	var out [][]byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		switch {
		case len(line) == 0:
		case line[0] == ' ' && len(out) > 0:
			out[len(out)-1] = append(out[len(out)-1], line...)
		default:
			out = append(out, append([]byte(nil), line...))
		}
	}
	return out
}

// The QEMU capture of a disk returning read errors (blkdebug, EIO: the
// SCSI layer's FAILED Result, Sense Key, Add. Sense and the block layer's
// I/O error for each failed read), through the follower's parsing,
// classification and fold: one entry for sda with every finding counted,
// by name since this machine's sysfs has no such disk.
func TestKernelFoldCapturedReadErrors(t *testing.T) {
	records := capturedRecords(t, "l4-read-errors.kmsg.txt")
	want := map[string]map[string]int{} // ref -> kind -> count, from Classify itself
	ioErrors := 0
	for _, r := range records {
		rec, err := kernlog.ParseKmsg(r)
		if err != nil {
			t.Fatalf("captured record %q: %v", r, err)
		}
		if f, ok := kernlog.Classify(rec.Message); ok {
			if want[f.Ref.String()] == nil {
				want[f.Ref.String()] = map[string]int{}
			}
			want[f.Ref.String()][string(f.Kind)]++
			if f.Kind == kernlog.KindIOError {
				ioErrors++
			}
		}
	}
	if ioErrors == 0 {
		t.Fatal("the capture has no I/O error Classify recognises")
	}
	pub := &memPublisher{}
	u := &urgentLog{}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/block"), 0o755); err != nil {
		t.Fatal(err)
	}
	k := &KernelLog{Root: root, Log: discard(), Urgent: u.ask, Quiet: 20 * time.Millisecond, Every: 200 * time.Millisecond}
	fold := newKernelFold(context.Background(), k, pub)
	now := time.Now()
	for _, r := range records {
		fold.record(r, now)
	}
	d := waitFacts(t, pub, 1, 2*time.Second)[0]
	if len(d.Disks) != len(want) || d.Lost != 0 || d.Dropped != 0 {
		t.Fatalf("fact = %+v, want entries for %v", d, want)
	}
	sda := entryFor(t, d, "sda")
	if sda.Disk != nil || sda.Counts[string(kernlog.KindIOError)] != ioErrors {
		t.Errorf("sda = %+v, want %d I/O errors, by name", sda, ioErrors)
	}
	if !slices.ContainsFunc(sda.Examples, func(s string) bool { return strings.HasPrefix(s, "I/O error, dev sda") }) {
		t.Errorf("sda examples %q: the block layer's line says the sector and must be among them", sda.Examples)
	}
	for _, e := range d.Disks {
		for kind, n := range want[e.Ref] {
			if e.Counts[kind] != n {
				t.Errorf("%s: %d %s, Classify finds %d", e.Ref, e.Counts[kind], kind, n)
			}
		}
		if len(e.Examples) == 0 || len(e.Examples) > kernelExamples {
			t.Errorf("%s: examples %q", e.Ref, e.Examples)
		}
	}
	if d.Ignored == 0 {
		t.Error("the zio lines and CDB dumps are counted as ignored")
	}
	if got := u.all(); len(got) != 0 {
		t.Errorf("asked SMART of %q: a disk that is not here cannot be read", got)
	}
}

// Every QEMU capture of /dev/kmsg (hot-unplugs, read errors, slow and hung
// I/O, the kernel BUG the deadman run provoked): the records, whatever they
// say, fold without error; the facts count exactly the findings about disks
// Classify makes; nothing is lost or dropped.
func TestKernelFoldCapturedKmsg(t *testing.T) {
	files, _ := filepath.Glob("../testdata/captured/zfs-2.3.2/*.kmsg.txt")
	if len(files) == 0 {
		t.Skip("no kmsg captures")
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			records := capturedRecords(t, name)
			pub := &memPublisher{}
			fold := newKernelFold(context.Background(), &KernelLog{Root: virtioRoot, Log: discard(), Quiet: time.Millisecond}, pub)
			classified := 0
			for _, r := range records {
				if rec, err := kernlog.ParseKmsg(r); err != nil {
					t.Fatalf("captured record %q: %v", r, err)
				} else if f, ok := kernlog.Classify(rec.Message); ok && reportByName(f.Ref) {
					classified++
				}
				fold.record(r, time.Now())
			}
			// On a loaded machine the quiet spell can end mid-capture; the
			// rest then waits for the next fact's slot, which stop publishes
			// at once. A flush the timer began may still be publishing.
			fold.stop()
			counted := 0
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				counted = 0
				for _, m := range pub.all() {
					for _, e := range m.data.(facts.KernelLogData).Disks {
						for _, n := range e.Counts {
							counted += n
						}
					}
				}
				if counted == classified || time.Now().After(deadline) {
					break
				}
			}
			for _, m := range pub.all() {
				if d := m.data.(facts.KernelLogData); d.Lost != 0 || d.Dropped != 0 {
					t.Errorf("fact %+v: nothing was lost or dropped", d)
				}
			}
			if counted != classified {
				t.Errorf("facts count %d findings, Classify found %d about disks", counted, classified)
			}
			t.Logf("%d records, %d findings about disks", len(records), classified)
		})
	}
}

// Real USB resets of a bridge at port 2-1.2 (testdata/kernel-log, bb-qq/uas
// issue 3) on a machine whose sysfs has a disk at that port
// (testdata/sysfs/ports-usb-hub-derived): the resets are counted against
// that disk, named by serial and by-id, and its SMART is asked for once.
func TestKernelFoldRealUSBResetsNameTheDisk(t *testing.T) {
	in, err := os.Open("../testdata/kernel-log/usb-bb-qq-uas-3-reset-not-accepting.txt")
	if err != nil {
		t.Skipf("kernel log sample not present: %v", err)
	}
	defer in.Close()
	u := &urgentLog{}
	pub := &memPublisher{}
	k := &KernelLog{Root: "../testdata/sysfs/ports-usb-hub-derived", Log: discard(), Urgent: u.ask,
		UserRecords: true, // a saved log does not say the facility
		Quiet:       20 * time.Millisecond, Every: 200 * time.Millisecond}
	fold := newKernelFold(context.Background(), k, pub)
	resets := 0
	if _, err := kernlog.ReadSaved(in, func(rec kernlog.Record) error {
		if f, ok := kernlog.Classify(rec.Message); ok && f.Ref.Name == "2-1.2" && f.Kind == kernlog.KindLinkReset {
			resets++
		}
		fold.take(rec, time.Now())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if resets == 0 {
		t.Fatal("the sample has no reset of 2-1.2 Classify recognises")
	}
	d := waitFacts(t, pub, 1, 2*time.Second)[0]
	e := entryFor(t, d, "usb 2-1.2")
	if e.Disk == nil || e.Disk.Kernel != "sdc" || e.Disk.Serial != "20170331000C3" || e.Disk.Transport != "usb" ||
		e.Disk.ByID != "/dev/disk/by-id/usb-External_USB3.0_DISK00_20170331000C3-0:0" {
		t.Errorf("usb 2-1.2 = %+v, want the disk at that port", e.Disk)
	}
	if e.Counts[string(kernlog.KindLinkReset)] != resets {
		t.Errorf("counts %v, want %d link resets", e.Counts, resets)
	}
	if got := u.all(); len(got) != 1 || got[0] != "sdc" {
		t.Errorf("urgent SMART reads %q, want [sdc]", got)
	}
	t.Logf("%+v", e)
}
