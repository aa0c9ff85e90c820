package collectors

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/kernlog"
)

// How kernel records become facts.
const (
	// kernelQuiet: the first record of a quiet spell is published this
	// long after it, so that the lines of one error (a SCSI error is five
	// lines) arrive in one fact.
	kernelQuiet = 250 * time.Millisecond
	// kernelEvery: while records keep coming, at most one fact this often.
	kernelEvery = 2 * time.Second
	// kernelMaxPerSecond caps the findings counted per second; a
	// controller reset logs thousands, and the rest are counted as dropped.
	kernelMaxPerSecond = 2000
	// Memory bounds of one fact: disks (or unmapped names) tracked, and
	// distinct example messages kept per disk and their length.
	kernelMaxDisks   = 64
	kernelExamples   = 3
	kernelExampleMax = 512
	// kernelMaxLag bounds the age a record's own stamp may claim: beyond
	// it the kernel's clock and ours disagree and the reading time is used.
	kernelMaxLag = 10 * time.Minute
)

// kernelFold gathers what the records say between two facts. The reader
// goroutine adds; a timer publishes. No timer runs while the log is quiet.
type kernelFold struct {
	ctx      context.Context
	pub      Publisher
	log      *slog.Logger
	classify func(string) (kernlog.Finding, bool)
	user     bool
	urgent   func(string)
	departed func()
	quiet    time.Duration
	every    time.Duration
	perSec   int
	ports    *portCache

	mu               sync.Mutex
	disks            map[string]*kernelEntry
	lost, dropped    uint64
	ignored          uint64 // since the follower started
	lastSeq          uint64
	seenSeq, overran bool
	window           time.Time // start of the current rate-limit second
	inWindow         int
	lastFact         time.Time
	timer            *time.Timer
}

func newKernelFold(ctx context.Context, k *KernelLog, pub Publisher) *kernelFold {
	f := &kernelFold{ctx: ctx, pub: pub, log: k.log(), classify: k.Classify, user: k.UserRecords,
		urgent: k.Urgent, departed: k.DisksChanged,
		quiet: cmp.Or(k.Quiet, kernelQuiet), every: cmp.Or(k.Every, kernelEvery), perSec: cmp.Or(k.MaxPerSecond, kernelMaxPerSecond),
		ports: &portCache{ctx: ctx, root: cmp.Or(k.Root, "/"), log: k.log()},
		disks: map[string]*kernelEntry{}}
	if f.classify == nil {
		f.classify = kernlog.Classify
	}
	f.ports.rebuild(time.Now())
	return f
}

// record takes one raw /dev/kmsg record read at now.
func (f *kernelFold) record(b []byte, now time.Time) {
	rec, err := kernlog.ParseKmsg(b)
	if err != nil {
		f.mu.Lock()
		f.ignored++
		f.mu.Unlock()
		f.log.Debug("kernel log record not understood", "err", err)
		return
	}
	f.take(rec, now)
}

// take counts one parsed record read at now.
func (f *kernelFold) take(rec kernlog.Record, now time.Time) {
	f.mu.Lock()
	if rec.Seq > 0 { // 0: a saved log that does not say
		f.noteSeqLocked(rec.Seq)
	}
	if !f.user && rec.Facility != 0 {
		f.ignored++
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()

	// Classify is cheap on the lines it does not know, so every record is
	// classified and the cap applies to findings: a storm of other lines
	// never hides a disk's.
	finding, ok := f.classify(rec.Message)
	if !ok && announcesDisk(rec.Message) {
		// A new disk: learn its names before it logs an error.
		f.ports.announced(announcedName(rec.Message), now)
	}
	f.mu.Lock()
	switch {
	case !ok:
		f.ignored++
		f.mu.Unlock()
		return
	case !f.allowLocked(now):
		f.dropped++
		f.scheduleLocked(now)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	ids := f.ports.lookup(finding.Ref, now)
	if len(ids) == 0 && !reportByName(finding.Ref) {
		f.mu.Lock()
		f.ignored++
		f.mu.Unlock()
		return
	}
	at := recordTime(rec.Mono, now)
	f.mu.Lock()
	ask := f.addLocked(finding, ids, rec.Message, at)
	f.scheduleLocked(now)
	f.mu.Unlock()
	for _, kernel := range ask {
		f.urgent(kernel)
	}
	if finding.Kind == kernlog.KindGone && f.departed != nil {
		f.departed()
	}
}

// reportByName says whether a name that maps to no disk is still worth a
// fact: a disk's kernel name or an NVMe controller (the disk may have just
// left). A SATA port, SCSI address or USB device that carries no disk is an
// empty port, an optical drive or a keyboard; a loop, dm or zvol device is
// no disk, and its disk's own errors are logged beside.
func reportByName(ref kernlog.Ref) bool {
	switch ref.Kind {
	case disk.PortBlock:
		return !disk.IsVirtual(ref.Name)
	case disk.PortNVMe:
		return true
	}
	return false
}

// overrun notes an EPIPE: records were overwritten unread.
func (f *kernelFold) overrun() {
	f.mu.Lock()
	f.overran = true
	f.mu.Unlock()
}

// noteSeqLocked counts the records the sequence skipped as lost. An
// overrun before any record was read loses an unknown number: at least one.
func (f *kernelFold) noteSeqLocked(seq uint64) {
	switch {
	case f.seenSeq && seq > f.lastSeq+1:
		f.lost += seq - f.lastSeq - 1
	case f.overran && !f.seenSeq:
		f.lost++
	}
	if f.overran || (f.seenSeq && seq > f.lastSeq+1) {
		f.log.Debug("kernel log records were overwritten before zwatch read them", "lost", f.lost)
		f.scheduleLocked(time.Now())
	}
	f.overran = false
	f.lastSeq, f.seenSeq = seq, true
}

// allowLocked applies the per-second cap on findings.
func (f *kernelFold) allowLocked(now time.Time) bool {
	if now.Sub(f.window) >= time.Second || now.Before(f.window) {
		f.window, f.inWindow = now, 0
	}
	f.inWindow++
	return f.inWindow <= f.perSec
}

// addLocked counts finding against each disk it names (or its name, when
// it names none) and returns the kernel names whose SMART to read now: a
// disk the first time it appears in this fact.
func (f *kernelFold) addLocked(finding kernlog.Finding, ids []disk.Identity, msg string, at time.Time) []string {
	ref := finding.Ref.String()
	var ask []string
	add := func(key string, id *disk.Identity) {
		e := f.disks[key]
		if e == nil {
			if len(f.disks) >= kernelMaxDisks {
				f.dropped++
				return
			}
			e = &kernelEntry{KernelDiskLog: facts.KernelDiskLog{Ref: ref, Disk: id, Counts: map[string]int{}, First: at, Last: at}}
			f.disks[key] = e
			if id != nil && !id.Absent && finding.Kind != kernlog.KindGone && f.urgent != nil {
				ask = append(ask, id.Kernel)
			}
		}
		e.Counts[string(finding.Kind)]++
		if at.After(e.Last) {
			e.Last = at
		}
		e.addExample(finding.Kind, msg)
	}
	if len(ids) == 0 {
		add("ref:"+ref, nil)
	}
	for i := range ids {
		id := ids[i]
		add("disk:"+id.Kernel, &id)
	}
	return ask
}

// kernelEntry is one disk's part of the next fact, with the kind of each
// example kept.
type kernelEntry struct {
	facts.KernelDiskLog
	exampleKinds []kernlog.Kind
}

// addExample keeps up to kernelExamples distinct messages, each cut to
// kernelExampleMax bytes on a character boundary. A kind without an example
// takes the place of the newest example of a kind that has two: the three
// lines of one SCSI error say less than its sense and the block layer's
// "I/O error, dev sdb, sector N".
func (e *kernelEntry) addExample(kind kernlog.Kind, msg string) {
	if len(msg) > kernelExampleMax {
		cut := kernelExampleMax
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	if slices.Contains(e.Examples, msg) {
		return
	}
	if len(e.Examples) < kernelExamples {
		e.Examples = append(e.Examples, msg)
		e.exampleKinds = append(e.exampleKinds, kind)
		return
	}
	if slices.Contains(e.exampleKinds, kind) {
		return
	}
	for i := len(e.exampleKinds) - 1; i >= 0; i-- {
		k := e.exampleKinds[i]
		if n := countOf(e.exampleKinds, k); n > 1 {
			e.Examples[i], e.exampleKinds[i] = msg, kind
			return
		}
	}
}

func countOf(kinds []kernlog.Kind, k kernlog.Kind) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}

// scheduleLocked arms the one timer that publishes: quiet after the first
// record of a spell, and no sooner than every after the previous fact.
func (f *kernelFold) scheduleLocked(now time.Time) {
	if f.timer != nil {
		return
	}
	at := now.Add(f.quiet)
	if next := f.lastFact.Add(f.every); next.After(at) {
		at = next
	}
	f.timer = time.AfterFunc(at.Sub(now), f.flush)
}

// flush publishes what was gathered since the previous fact.
func (f *kernelFold) flush() {
	f.mu.Lock()
	f.timer = nil
	data := facts.KernelLogData{Source: string(kernlog.FormatKmsg), Disks: []facts.KernelDiskLog{},
		Lost: f.lost, Dropped: f.dropped, Ignored: f.ignored}
	for _, e := range f.disks {
		data.Disks = append(data.Disks, e.KernelDiskLog)
	}
	clear(f.disks)
	f.lost, f.dropped = 0, 0
	f.lastFact = time.Now()
	f.mu.Unlock()
	if len(data.Disks) == 0 && data.Lost == 0 && data.Dropped == 0 {
		return
	}
	slices.SortFunc(data.Disks, func(a, b facts.KernelDiskLog) int {
		return cmp.Or(a.First.Compare(b.First), cmp.Compare(a.Ref, b.Ref))
	})
	if data.Lost > 0 || data.Dropped > 0 {
		f.log.Info("kernel log burst folded", "disks", len(data.Disks), "lost", data.Lost, "dropped", data.Dropped)
	}
	if err := Publish(f.ctx, f.pub, facts.KernelLog, KernelLogName, data); err != nil && f.ctx.Err() == nil {
		f.log.Warn("publish kernel log", "err", err)
	}
}

// stop publishes what is pending, unless the follower is shutting down.
func (f *kernelFold) stop() {
	f.mu.Lock()
	t := f.timer
	f.mu.Unlock()
	if t != nil && t.Stop() && f.ctx.Err() == nil {
		f.flush()
	}
}

// recordTime turns the kernel's stamp (time since boot) into wall time.
func recordTime(mono time.Duration, now time.Time) time.Time {
	var ts unix.Timespec
	if mono < 0 || unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return now
	}
	lag := time.Duration(ts.Nano()) - mono
	if lag < 0 || lag > kernelMaxLag {
		return now
	}
	return now.Add(-lag)
}

// announcesDisk tells the records the kernel logs when a disk appears: sd's
// "[sdh] Attached SCSI disk" (SATA, SAS, USB, virtio-scsi), virtio-blk's
// "virtio_blk virtio5: [vdc] …" and an NVMe controller's queue count.
func announcesDisk(msg string) bool {
	return strings.HasSuffix(msg, "] Attached SCSI disk") || strings.HasSuffix(msg, "] Attached SCSI removable disk") ||
		strings.HasPrefix(msg, "virtio_blk virtio") ||
		strings.HasPrefix(msg, "nvme nvme") && strings.HasSuffix(msg, "/poll queues")
}
