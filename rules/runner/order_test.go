package runner

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
)

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
	as, err := rules.Active(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.State == alert.Firing {
			t.Errorf("%s fires again after the redelivery", a.Name)
		}
	}
}
