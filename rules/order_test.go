package rules

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
)

const (
	faultFile   = "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt"
	healthyFile = "zpool-status/freebsd-raidz1-gpt-label-online.txt"
)

func firingCount(ns []alert.Notification) (firing, resolved int) {
	for _, n := range ns {
		if n.Status == alert.Firing {
			firing++
		} else {
			resolved++
		}
	}
	return firing, resolved
}

// A redelivered old fact (same stream, lower or equal sequence) changes
// nothing, even when the host's clock stepped back between the facts; a
// fact of a recreated stream counts again; what was applied survives a
// save and load.
func TestObserveSeqIgnoresOlderFacts(t *testing.T) {
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	e := NewEngine(cfg, nil)
	subj := bus.Subject(testHost, facts.ZpoolStatus.Name())
	at := func(seq uint64) Position { return Position{Stream: "s1", Subject: subj, Seq: seq} }
	fault := statusEnv(t, faultFile, t0)
	// The host's clock stepped back an hour before the healthy reading.
	healthy := statusEnv(t, healthyFile, t0.Add(-time.Hour))

	now := t0
	if err := e.ObserveSeq(fault, at(1), now); err != nil {
		t.Fatal(err)
	}
	if f, _ := firingCount(e.Tick(now)); f != 1 || find(e, namePoolState) == nil {
		t.Fatalf("the fault did not page: %v", active(e))
	}
	now = now.Add(10 * time.Second)
	if err := e.ObserveSeq(healthy, at(2), now); err != nil {
		t.Fatal(err)
	}
	if _, r := firingCount(e.Tick(now)); r != 1 || find(e, namePoolState) != nil {
		t.Fatalf("the healthy reading (older clock, newer sequence) did not resolve: %v", active(e))
	}
	// The fault again, as the bus redelivers it after a crash.
	now = now.Add(30 * time.Second)
	if err := e.ObserveSeq(fault, at(1), now); err != nil {
		t.Fatal(err)
	}
	if ns := e.Tick(now); len(ns) != 0 || find(e, namePoolState) != nil {
		t.Fatalf("the redelivered old fault was applied: %v, %v", noteLines(ns), active(e))
	}
	// The same fact twice (saved, not acked) is not applied twice either.
	if err := e.ObserveSeq(healthy, at(2), now); err != nil {
		t.Fatal(err)
	}
	if got := e.hosts[testHost].Applied[sourceKey(subj, "zpool_status")]; got != 2 {
		t.Fatalf("applied sequence %d, want 2", got)
	}

	// Save and load through a real state bucket: the sequences come back.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, kv := openStateBucket(ctx, t)
	if err := e.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}
	e2 := NewEngine(cfg, nil)
	if err := e2.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	if err := e2.ObserveSeq(fault, at(1), now); err != nil {
		t.Fatal(err)
	}
	if ns := e2.Tick(now); len(ns) != 0 {
		t.Fatalf("after a restart the redelivered old fault paged: %v", noteLines(ns))
	}

	// A stream created anew counts from 1 again: its facts are not old.
	if err := e2.ObserveSeq(fault, Position{Stream: "s2", Subject: subj, Seq: 1}, now); err != nil {
		t.Fatal(err)
	}
	if f, _ := firingCount(e2.Tick(now)); f != 1 {
		t.Fatalf("a fault on a recreated stream was ignored: %v", active(e2))
	}
	// Without a known position (rules eval, tests) a fact is applied.
	if err := e2.ObserveSeq(healthy, Position{}, now); err != nil || find(e2, namePoolState) != nil {
		t.Fatalf("a fact without position was not applied: %v %v", err, active(e2))
	}
}

// The remembered sequences stay bounded: the source heard from longest ago
// goes first.
func TestAppliedSequencesAreBounded(t *testing.T) {
	h := newHostState(testHost)
	for i := range maxSources + 50 {
		h.applied("s", fmt.Sprintf("zwatch.v1.nas1.smart.D%d|smart", i), uint64(i+1))
	}
	if len(h.Applied) != maxSources {
		t.Fatalf("%d sources remembered, want %d", len(h.Applied), maxSources)
	}
	if _, ok := h.Applied["zwatch.v1.nas1.smart.D0|smart"]; ok {
		t.Error("the oldest source was kept")
	}
	if h.Applied[fmt.Sprintf("zwatch.v1.nas1.smart.D%d|smart", maxSources+49)] != uint64(maxSources+50) {
		t.Error("the newest source was dropped")
	}
}
