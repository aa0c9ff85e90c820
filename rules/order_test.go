package rules

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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

// lostAcks is the bus as an engine killed between saving its state and
// acknowledging sees it: every acknowledgement it sends is lost, so the
// server redelivers those facts after the ack wait.
type lostAcks struct{ jetstream.JetStream }

func (j lostAcks) CreateOrUpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := j.JetStream.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, err
	}
	return lostAckConsumer{c}, nil
}

type lostAckConsumer struct{ jetstream.Consumer }

func (c lostAckConsumer) Messages(opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, error) {
	it, err := c.Consumer.Messages(opts...)
	if err != nil {
		return nil, err
	}
	return lostAckIter{it}, nil
}

type lostAckIter struct{ jetstream.MessagesContext }

func (it lostAckIter) Next(opts ...jetstream.NextOpt) (jetstream.Msg, error) {
	m, err := it.MessagesContext.Next(opts...)
	if err != nil {
		return nil, err
	}
	return lostAck{m}, nil
}

type lostAck struct{ jetstream.Msg }

func (lostAck) Ack() error { return nil }

// shortAckWait makes the server redeliver unacknowledged facts after d
// instead of the rule consumer's 30 s, so the test need not wait that long.
type shortAckWait struct {
	jetstream.JetStream
	d time.Duration
}

func (j shortAckWait) CreateOrUpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	cfg.AckWait = j.d
	return j.JetStream.CreateOrUpdateConsumer(ctx, stream, cfg)
}

// The crash from issue 14: the engine saves its state after a fault (A)
// and after the healthy reading that ends it (B), and dies before either
// acknowledgement reaches the bus. After the restart the bus redelivers A
// and B; neither may page again.
func TestRunRedeliveredOldFactDoesNotPage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := openTestBus(ctx, t)
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	subj := bus.Subject(testHost, facts.ZpoolStatus.Name())
	publish := func(file string) {
		t.Helper()
		msg, err := bus.Wrap(facts.ZpoolStatus.Name(), testHost, "zpool_status", time.Now(),
			facts.StatusData{Source: "text", Pools: statusPools(t, file)})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, subj, msg); err != nil {
			t.Fatal(err)
		}
	}
	alerts, err := b.JS.Stream(ctx, bus.StreamAlerts)
	if err != nil {
		t.Fatal(err)
	}
	notes := func() uint64 {
		info, err := alerts.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	waitNotes := func(want uint64) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); notes() < want; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d notifications, want %d", notes(), want)
			}
		}
	}
	start := func(js jetstream.JetStream) (stop func()) {
		rb := *b
		rb.JS = js
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- Run(rctx, &rb, cfg, nil) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}

	stop := start(lostAcks{b.JS})
	publish(faultFile)
	waitNotes(1) // the page
	publish(healthyFile)
	waitNotes(2) // its resolved notice
	stop()       // killed: neither ack reached the bus

	cons, err := b.JS.Consumer(ctx, bus.StreamFacts, ConsumerName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 2 {
		t.Fatalf("%d facts await their ack, want 2 (the crash was not simulated)", info.NumAckPending)
	}

	stop = start(shortAckWait{b.JS, 500 * time.Millisecond})
	defer stop()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err = cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumRedelivered == 0 && info.NumPending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redelivered facts were not acknowledged: %+v", info)
		}
	}
	// A page would be published at the next tick (one second).
	time.Sleep(1500 * time.Millisecond)
	if n := notes(); n != 2 {
		t.Fatalf("%d notifications after the redelivery, want 2: an old fact paged again", n)
	}
	as, err := Active(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.State == alert.Firing {
			t.Errorf("%s fires again after the redelivery", a.Name)
		}
	}
}
