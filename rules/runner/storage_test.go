package runner

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// With the outbox gone (its stream deleted, as a store that went offline
// looks to a publisher), the engine keeps evaluating, hands the page to
// Direct, reports the outbox failing, and publishes the same notification
// (same ID) to the outbox once it is back.
func TestRunDeliversDirectlyWhileTheOutboxIsDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := openTestBus(ctx, t)
	st, err := b.JS.Stream(ctx, bus.StreamAlerts)
	if err != nil {
		t.Fatal(err)
	}
	alertsCfg := st.CachedInfo().Config
	if err := b.JS.DeleteStream(ctx, bus.StreamAlerts); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var direct []alert.Notification
	failed := map[string]int{}
	opts := Options{Delivery: &delivery.Path{
		Direct: func(_ context.Context, n alert.Notification) error {
			mu.Lock()
			defer mu.Unlock()
			direct = append(direct, n)
			return nil
		},
		Storage: func(part string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[part]++
			}
		},
		Degraded: func() bool { return false },
	}}
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- RunWith(runCtx, b, cfg, opts, nil) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("RunWith: %v", err)
		}
	}()

	msg, err := bus.Wrap(facts.ZpoolStatus.Name(), testHost, "zpool_status", time.Now(),
		facts.StatusData{Source: "text", Pools: statusPools(t, "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, bus.Subject(testHost, facts.ZpoolStatus.Name()), msg); err != nil {
		t.Fatal(err)
	}
	var page alert.Notification
	waitUntil(t, 15*time.Second, "a page delivered directly", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(direct) > 0 {
			page = direct[0]
		}
		return len(direct) > 0
	})
	if page.Status != alert.Firing || len(page.Alerts) == 0 {
		t.Fatalf("direct page: %+v", page)
	}
	mu.Lock()
	if failed["outbox"] == 0 {
		t.Error("the outbox failure was not reported")
	}
	mu.Unlock()

	// The outbox comes back: the page sent directly is published with its ID.
	if _, err := b.JS.CreateStream(ctx, alertsCfg); err != nil {
		t.Fatal(err)
	}
	cons, err := b.JS.OrderedConsumer(ctx, bus.StreamAlerts, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(15 * time.Second))
	if err != nil {
		t.Fatalf("the page never reached the outbox: %v", err)
	}
	if id := m.Headers().Get(jetstream.MsgIDHeader); id != page.ID {
		t.Errorf("outbox got %s, want the direct page %s", id, page.ID)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(direct) != 1 {
		t.Errorf("%d direct deliveries, want 1", len(direct))
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
