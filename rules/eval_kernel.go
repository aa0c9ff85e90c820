package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/input"
	"github.com/zwatch/zwatch/model/kernlog"
)

// A saved kernel log in `zwatch rules eval` becomes the kernel.log facts
// the follower would have published while it was written: one per burst of
// one disk, in time order, so the rules count its bursts as they would
// live. The log is taken as just written: its last record is the eval's
// now, the others as far before it as the log says (wall-clock times, or
// the time since boot of plain dmesg). Disks are named as the kernel named
// them (sdb, ata3, usb 2-1): the sysfs of the machine it came from is not
// here, so no serial is known and nothing joins by serial.

// Bounds of what one saved log may make.
const (
	maxEvalKernelRefs   = maxKernelDisks
	maxEvalKernelBursts = 256
	maxKernelExamples   = 3
	kernelProbe         = 1 << 20
)

// evalBurst is a run of records about one disk, none further than
// rules.kernel.burst_gap from the previous.
type evalBurst struct {
	ref         string
	first, last time.Time
	counts      map[string]int
	examples    []string
}

// kernelEnvelopes reads data as a saved kernel log; kernlog.ErrNotKernelLog
// when it is none.
func kernelEnvelopes(file string, data []byte, at time.Time, cfg kernelSettings) ([]bus.Envelope, error) {
	name := filepath.Base(input.Name(file))
	// Any file that is no tool output comes here: its first MiB tells a
	// kernel log, so 60 MiB of something else is not read line by line again.
	if len(data) > kernelProbe {
		probe := data[:kernelProbe]
		if i := bytes.LastIndexByte(probe, '\n'); i > 0 {
			probe = probe[:i+1]
		}
		if _, err := kernlog.ReadSaved(bytes.NewReader(probe), func(kernlog.Record) error { return nil }); errors.Is(err, kernlog.ErrNotKernelLog) {
			return nil, fmt.Errorf("rules eval %s: %w", name, err)
		}
	}
	bursts := map[string][]*evalBurst{}
	var order []string
	var ignored, dropped uint64
	var prev, end time.Time
	seen := false
	format, err := kernlog.ReadSaved(bytes.NewReader(data), func(r kernlog.Record) error {
		t := recordTime(r, prev)
		prev = t
		if !seen || t.After(end) {
			end, seen = t, true
		}
		f, ok := kernlog.Classify(r.Message)
		if !ok {
			ignored++
			return nil
		}
		ref := evalRef(f.Ref)
		key := ref.String()
		bs, known := bursts[key]
		if !known && len(bursts) >= maxEvalKernelRefs {
			dropped++
			return nil
		}
		if !known {
			order = append(order, key)
		}
		var b *evalBurst
		if n := len(bs); n > 0 && !t.Before(bs[n-1].last) && t.Sub(bs[n-1].last) <= cfg.BurstGap.D() {
			b = bs[n-1]
		} else {
			if len(bs) == maxEvalKernelBursts {
				bs = mergeOldest(bs)
			}
			b = &evalBurst{ref: key, first: t, counts: map[string]int{}}
			bs = append(bs, b)
			bursts[key] = bs
		}
		b.last = t
		b.counts[string(f.Kind)]++
		if len(b.examples) < maxKernelExamples && !slices.Contains(b.examples, cutText(r.Message, maxKernelText)) {
			b.examples = append(b.examples, cutText(r.Message, maxKernelText))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rules eval %s: %w", name, err)
	}
	var all []*evalBurst
	for _, key := range order {
		all = append(all, bursts[key]...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].first.Before(all[j].first) })
	// Times as long before now as before the log's end: a whole shift
	// would overflow for a syslog line's year 0.
	moved := func(t time.Time) time.Time { return at.Add(-end.Sub(t)) }
	src := string(format)
	var out []bus.Envelope
	for _, b := range all {
		d := facts.KernelLogData{Source: src, Disks: []facts.KernelDiskLog{{
			Ref: b.ref, Counts: b.counts, First: moved(b.first), Last: moved(b.last), Examples: b.examples,
		}}}
		env, err := kernelEnvelope(name, d, at)
		if err != nil {
			return nil, err
		}
		out = append(out, env)
	}
	// The last fact carries what was not counted; a log that says nothing
	// about disks is one fact without any.
	last := facts.KernelLogData{Source: src, Disks: []facts.KernelDiskLog{}, Ignored: ignored, Dropped: dropped}
	env, err := kernelEnvelope(name, last, at)
	if err != nil {
		return nil, err
	}
	return append(out, env), nil
}

// evalRef names a disk as the kernel does, folding the names of one disk
// together where no sysfs can: the first device on a SATA port is the port
// (ata3.00 → ata3; a port multiplier's ata3.01 stays apart). Classify has
// already made a partition its disk (sdb1 → sdb).
func evalRef(r kernlog.Ref) kernlog.Ref {
	if r.Kind == "ata" {
		r.Name = strings.TrimSuffix(r.Name, ".00")
	}
	return r
}

func kernelEnvelope(name string, d facts.KernelLogData, at time.Time) (bus.Envelope, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return bus.Envelope{}, fmt.Errorf("rules eval %s: %w", name, err)
	}
	return bus.Envelope{Schema: facts.KernelLog.Schema(), Host: EvalHost, Collector: "kernel_log", CollectedAt: at, Data: raw}, nil
}

// recordTime is when a record was logged, on a clock of its own: the wall
// clock when the format has one, else the time since boot; a record with
// neither counts as logged with the one before it.
func recordTime(r kernlog.Record, prev time.Time) time.Time {
	switch {
	case !r.Time.IsZero():
		return r.Time
	case r.Mono >= 0:
		return time.Unix(0, 0).UTC().Add(r.Mono)
	}
	return prev
}

// mergeOldest folds the two oldest bursts into one, to keep a log of
// thousands of bursts bounded; only the oldest lose their separation.
func mergeOldest(bs []*evalBurst) []*evalBurst {
	a, b := bs[0], bs[1]
	for k, n := range b.counts {
		a.counts[k] += n
	}
	a.last = b.last
	for _, ex := range b.examples {
		if len(a.examples) < maxKernelExamples && !slices.Contains(a.examples, ex) {
			a.examples = append(a.examples, ex)
		}
	}
	return append(bs[:1], bs[2:]...)
}
