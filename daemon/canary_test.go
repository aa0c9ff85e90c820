package daemon

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/rules/runner"
)

// TestHeartbeatURLOnlyWhileThePipelineWorks runs the heartbeat with its
// canary, the real rule engine and the canary sink on an embedded bus: the
// heartbeat URL is pinged and systemd hears "healthy" while the canary comes
// back; with the rule engine stopped (the bus still accepts every
// heartbeat) the pings stop and the status says why; with the engine back
// they resume.
func TestHeartbeatURLOnlyWhileThePipelineWorks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{StateDir: t.TempDir(), FactSubjects: facts.StreamSubjects()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	log := slog.New(slog.DiscardHandler)

	var pings atomic.Int32
	hc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { pings.Add(1) }))
	defer hc.Close()
	var mu sync.Mutex
	var status []string
	can := delivery.NewCanary(b, "nas1", log)
	hb := &heartbeat{
		pub: &collectors.BusPublisher{Bus: b, Host: "nas1"}, tracker: newTracker(), started: time.Now(),
		every: 500 * time.Millisecond, url: hc.URL, client: hc.Client(), log: log, canary: can,
		notify: func(s string) {
			mu.Lock()
			defer mu.Unlock()
			status = append(status, s)
		},
	}
	lastStatus := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(status) == 0 {
			return ""
		}
		return status[len(status)-1]
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = can.Sink(ctx) })
	wg.Go(func() { _ = hb.run(ctx) })
	startRules := func() (stop func()) {
		rctx, rcancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = runner.RunWith(rctx, b, config.DefaultRules(), runner.Options{}, log)
		}()
		return func() { rcancel(); <-done }
	}

	stopRules := startRules()
	waitFor(t, 15*time.Second, "pings while the pipeline works", func() bool { return pings.Load() >= 3 })
	if s := lastStatus(); s != "STATUS=healthy" {
		t.Errorf("status %q while healthy", s)
	}

	stopRules()
	waitFor(t, 15*time.Second, "an unhealthy status", func() bool {
		return strings.HasPrefix(lastStatus(), "STATUS=UNHEALTHY: the health canary did not come back")
	})
	before := pings.Load()
	time.Sleep(4 * time.Second)
	if n := pings.Load(); n != before {
		t.Errorf("heartbeat URL pinged %d times while the rule engine was stopped", n-before)
	}

	stopRules = startRules()
	defer stopRules()
	waitFor(t, 15*time.Second, "pings again", func() bool { return pings.Load() > before })
}
