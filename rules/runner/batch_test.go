package runner

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
	"github.com/zwatch/zwatch/rules"
)

// batchBench is a bus with a rule engine that can be started, killed and
// started again, and what the outbox holds.
type batchBench struct {
	t         *testing.T
	ctx       context.Context
	b         *bus.Bus
	cfg       config.RulesConfig
	published int
}

func newBatchBench(ctx context.Context, t *testing.T) *batchBench {
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	return &batchBench{t: t, ctx: ctx, b: openTestBus(ctx, t), cfg: cfg}
}

// start runs an engine on js (the bus's own, or one that loses acks or
// shortens the ack wait); stop kills it.
func (bb *batchBench) start(js jetstream.JetStream) (stop func()) {
	rb := *bb.b
	rb.JS = js
	rctx, cancel := context.WithCancel(bb.ctx)
	done := make(chan error, 1)
	go func() { done <- Run(rctx, &rb, bb.cfg, nil) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			bb.t.Error(err)
		}
	}
}

func (bb *batchBench) publish(host, kind string, data any, at time.Time) {
	bb.t.Helper()
	collector := map[string]string{facts.ZpoolStatus.Name(): "zpool_status", facts.Heartbeat.Name(): "zwatch"}[kind]
	msg, err := bus.Wrap(kind, host, collector, at, data)
	if err != nil {
		bb.t.Fatal(err)
	}
	if err := bb.b.Publish(bb.ctx, bus.Subject(host, kind), msg); err != nil {
		bb.t.Fatal(err)
	}
	bb.published++
}

func (bb *batchBench) status(host, file string) {
	bb.t.Helper()
	bb.publish(host, facts.ZpoolStatus.Name(), facts.StatusData{Source: "text", Pools: statusPools(bb.t, file)}, time.Now())
}

// heartbeats publishes n heartbeats of host, each a distinct fact.
func (bb *batchBench) heartbeats(host string, n int) {
	bb.t.Helper()
	for i := range n {
		bb.publish(host, facts.Heartbeat.Name(), facts.HeartbeatData{Version: fmt.Sprintf("batch-%d", i)}, time.Now())
	}
}

// notes counts the notifications in the outbox by host and status.
func (bb *batchBench) notes() (total int, by map[string]int) {
	bb.t.Helper()
	cons, err := bb.b.JS.OrderedConsumer(bb.ctx, bus.StreamAlerts, jetstream.OrderedConsumerConfig{})
	if err != nil {
		bb.t.Fatal(err)
	}
	st, err := bb.b.JS.Stream(bb.ctx, bus.StreamAlerts)
	if err != nil {
		bb.t.Fatal(err)
	}
	info, err := st.Info(bb.ctx)
	if err != nil {
		bb.t.Fatal(err)
	}
	by = map[string]int{}
	for range info.State.Msgs {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			bb.t.Fatal(err)
		}
		var n alert.Notification
		if _, err := bus.Decode(m.Data(), "notification", &n); err != nil {
			bb.t.Fatal(err)
		}
		by[n.Host+" "+string(n.Status)]++
		total++
	}
	return total, by
}

func (bb *batchBench) waitNotes(want int) {
	bb.t.Helper()
	waitUntil(bb.t, 20*time.Second, fmt.Sprintf("%d notifications", want), func() bool {
		n, _ := bb.notes()
		return n >= want
	})
}

// consumerInfo is the rule engine's consumer as the server sees it.
func (bb *batchBench) consumerInfo() *jetstream.ConsumerInfo {
	bb.t.Helper()
	c, err := bb.b.JS.Consumer(bb.ctx, bus.StreamFacts, ConsumerName)
	if err != nil {
		bb.t.Fatal(err)
	}
	info, err := c.Info(bb.ctx)
	if err != nil {
		bb.t.Fatal(err)
	}
	return info
}

// waitAcked waits until every fact published is acknowledged (the
// consumer may not exist yet: the engine creates it as it starts).
func (bb *batchBench) waitAcked() {
	bb.t.Helper()
	waitUntil(bb.t, 30*time.Second, "every fact acknowledged", func() bool {
		c, err := bb.b.JS.Consumer(bb.ctx, bus.StreamFacts, ConsumerName)
		if err != nil {
			return false
		}
		info, err := c.Info(bb.ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0 && info.NumRedelivered == 0 && info.AckFloor.Stream >= uint64(bb.published)
	})
}

// stateWrites is how many writes the state bucket has taken.
func (bb *batchBench) stateWrites() uint64 {
	bb.t.Helper()
	st, err := bb.b.JS.Stream(bb.ctx, "KV_"+bus.StateBucket)
	if err != nil {
		bb.t.Fatal(err)
	}
	info, err := st.Info(bb.ctx)
	if err != nil {
		bb.t.Fatal(err)
	}
	return info.State.LastSeq
}

// checkNotes fails unless the outbox holds exactly want, by host and status.
func (bb *batchBench) checkNotes(want map[string]int) {
	bb.t.Helper()
	_, got := bb.notes()
	for k, n := range got {
		if want[k] != n {
			bb.t.Errorf("%s: %d notifications, want %d", k, n, want[k])
		}
	}
	for k, n := range want {
		if got[k] == 0 {
			bb.t.Errorf("%s: no notification, want %d", k, n)
		}
	}
}

// A batch of facts from several hosts is saved together and then acked.
// The engine is killed after its saves and before any ack reaches the bus
// (lostAcks): the restarted engine gets the whole batch again, pages
// nothing twice and loses nothing, and a later fault still pages once.
func TestRunBatchKilledBetweenSaveAndAck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bb := newBatchBench(ctx, t)
	hosts := []string{"nas1", "nas2", "nas3", "nas4", "nas5", "nas6"}
	// A backlog the engine finds when it starts, each host's facts one
	// after the other: a batch holds several facts of one host.
	for i, h := range hosts {
		bb.heartbeats(h, 6)
		if i < 3 {
			bb.status(h, faultFile)
		}
	}
	writesBefore := bb.stateWrites()
	stop := bb.start(lostAcks{bb.b.JS})
	bb.waitNotes(3)
	for _, h := range hosts[:3] {
		bb.status(h, healthyFile)
		bb.heartbeats(h, 2)
	}
	bb.waitNotes(6)
	// The resolved state is saved before the kill: no alert fires in it.
	waitUntil(t, 20*time.Second, "the resolved state saved", func() bool {
		as, err := rules.Active(ctx, bb.b)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.State == alert.Firing {
				return false
			}
		}
		return true
	})
	sent, writes := bb.published, bb.stateWrites()-writesBefore
	stop() // killed: no ack reached the bus
	if info := bb.consumerInfo(); info.NumAckPending != sent {
		t.Fatalf("%d facts await their ack, want all %d (the kill was not simulated)", info.NumAckPending, sent)
	}
	t.Logf("%d facts of %d hosts, %d state writes", sent, len(hosts), writes)
	if writes >= uint64(sent) {
		t.Errorf("%d state writes for %d facts: the batch saved each fact on its own", writes, sent)
	}

	stop = bb.start(shortAckWait{bb.b.JS, 500 * time.Millisecond})
	defer stop()
	bb.waitAcked()
	// A later fault pages once; a repeat from the redelivered batch would
	// have gone out before it (pages go out before their facts are acked).
	bb.status("nas4", faultFile)
	bb.waitNotes(7)
	bb.waitAcked()
	bb.checkNotes(map[string]int{
		"nas1 firing": 1, "nas1 resolved": 1,
		"nas2 firing": 1, "nas2 resolved": 1,
		"nas3 firing": 1, "nas3 resolved": 1,
		"nas4 firing": 1,
	})
}

// Another engine writes a host's state while a batch is open: the save
// conflicts, the engine reads the state again and gives the whole batch
// back; the facts are applied again, each host's fault pages once, and
// every fact is acknowledged in the end.
func TestRunBatchConflictReturnsTheBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bb := newBatchBench(ctx, t)
	hosts := []string{"nas1", "nas2", "nas3", "nas4"}
	stop := bb.start(bb.b.JS)
	defer stop()
	for _, h := range hosts {
		bb.heartbeats(h, 2)
	}
	bb.waitAcked()
	kv, err := bb.b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	// "Another engine" writes nas2's state as it is: only its revision
	// changes, which this engine learns at its next save.
	ent, err := kv.Get(ctx, stateKey("nas2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, stateKey("nas2"), ent.Value()); err != nil {
		t.Fatal(err)
	}
	delivered, before := bb.consumerInfo().Delivered.Consumer, bb.published
	for _, h := range hosts {
		bb.heartbeats(h, 3)
	}
	bb.status("nas2", faultFile)
	bb.status("nas3", faultFile)
	bb.waitNotes(2)
	bb.waitAcked()
	fresh := uint64(bb.published - before)
	deliveries := bb.consumerInfo().Delivered.Consumer - delivered
	t.Logf("%d facts after the conflicting write, %d deliveries", fresh, deliveries)
	if deliveries <= fresh {
		t.Error("nothing was delivered again: the conflict did not return the batch")
	}
	bb.checkNotes(map[string]int{"nas2 firing": 1, "nas3 firing": 1})
}
