package runner

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
)

// End to end through a real embedded NATS: a fact published on the facts
// subject comes out as a notification on ZWATCH_ALERTS, and `zwatch alerts`
// (Active) reads the firing alert from the state bucket.
func TestRunEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := openTestBus(ctx, t)

	read := time.Now()
	msg, err := bus.Wrap(facts.ZpoolStatus.Name(), testHost, "zpool_status", read,
		facts.StatusData{Source: "text", Pools: statusPools(t, "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt")})
	if err != nil {
		t.Fatal(err)
	}
	// A forgery first: a message on this host's subject claiming to be
	// another host is dropped, not believed.
	forged, _ := bus.Wrap(facts.ZpoolStatus.Name(), "nas2", "zpool_status", time.Now(),
		facts.StatusData{Source: "text", Pools: statusPools(t, "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt")})
	if err := b.Publish(ctx, bus.Subject(testHost, facts.ZpoolStatus.Name()), forged); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, bus.Subject(testHost, facts.ZpoolStatus.Name()), msg); err != nil {
		t.Fatal(err)
	}

	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Run(runCtx, b, cfg, nil) }()

	cons, err := b.JS.OrderedConsumer(ctx, bus.StreamAlerts, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(15 * time.Second))
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	if m.Subject() != "zwatch.v1.nas1.alert" || m.Headers().Get(jetstream.MsgIDHeader) == "" {
		t.Errorf("subject %s headers %v", m.Subject(), m.Headers())
	}
	var env bus.Envelope
	var n alert.Notification
	if env, err = bus.Decode(m.Data(), "notification", &n); err != nil {
		t.Fatal(err)
	}
	if env.Schema != bus.SchemaNotification || n.Status != alert.Firing || len(n.Alerts) != 3 || n.ID != m.Headers().Get(jetstream.MsgIDHeader) {
		raw, _ := json.MarshalIndent(n, "", " ")
		t.Fatalf("notification:\n%s", raw)
	}
	// Its timing: when the fact was read, stored by the stream, judged and
	// handed to the outbox, in that order.
	if tm := n.Timing; tm == nil || !tm.Read.Equal(read) || tm.Published.Before(tm.Read) || tm.Judged.Before(tm.Published) ||
		tm.Outbox.Before(tm.Judged) || time.Since(tm.Outbox) > time.Minute {
		t.Errorf("timing %+v, fact read at %s", n.Timing, read)
	}

	// The fact was acked once its state was saved.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := b.JS.Consumer(ctx, bus.StreamFacts, ConsumerName)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fact not acked: %+v", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	as, err := rules.Active(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 3 {
		t.Fatalf("active alerts: %d, want 3 (none for the forged host): %+v", len(as), as)
	}
	for _, a := range as {
		if a.State != alert.Firing {
			t.Errorf("%s is %s", a.Name, a.State)
		}
	}
}
