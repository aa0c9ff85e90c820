package delivery_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// TestDrainFigures measures, at the default retry settings (retry_initial
// 10s, retry_max 1h, send_timeout 30s), how long a channel's queued
// notifications take to arrive once its service answers again. It runs
// only with ZWATCH_DRAIN_FIGURES=1 (about four minutes) and only reports;
// docs/benchmarks.md has the command and the figures. It uses nothing but
// delivery.Run, so the same file measures older versions.
func TestDrainFigures(t *testing.T) {
	if os.Getenv("ZWATCH_DRAIN_FIGURES") == "" {
		t.Skip("set ZWATCH_DRAIN_FIGURES=1 to measure (about four minutes)")
	}
	defaults := func(cfg config.NotifyConfig) config.NotifyConfig {
		d := config.DefaultNotify()
		cfg.RetryInitial, cfg.RetryMax, cfg.SendTimeout = d.RetryInitial, d.RetryMax, d.SendTimeout
		return cfg
	}
	t.Run("smtp-outage", func(t *testing.T) {
		t.Parallel()
		figuresSMTPOutage(t, defaults)
	})
	t.Run("hung-webhook", func(t *testing.T) {
		t.Parallel()
		figuresHungWebhook(t, defaults)
	})
}

// figuresSMTPOutage: the mail server is down while three incidents page
// (0, 20, 40 s) and resolve (60, 80, 100 s); it is back at 120 s.
func figuresSMTPOutage(t *testing.T, defaults func(config.NotifyConfig) config.NotifyConfig) {
	cert := notifytest.NewCert(t)
	port := notifytest.FreePort(t)
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	cfg := defaults(notifytest.NotifyConfig(notifytest.EmailChannel("ops-mail", port, "starttls", "nas1", "pw", cert.CAFile, "ops@example.net")))
	stop := notifytest.RunNotifiers(t, b, cfg, delivery.Options{})
	defer stop()
	start := time.Now()
	at := func(s int) { time.Sleep(time.Until(start.Add(time.Duration(s) * time.Second))) }
	for i, g := range []string{"tank", "home", "backup"} {
		at(20 * i)
		notifytest.Publish(t, b, incident(g, g+"-fire", alert.Critical))
	}
	for i, g := range []string{"tank", "home", "backup"} {
		at(60 + 20*i)
		notifytest.Publish(t, b, incident(g, g+"-resolved", ""))
	}
	at(120)
	back := time.Now()
	sink := notifytest.StartSMTP(t, notifytest.SinkStartTLS, &cert, "nas1", "pw", fmt.Sprintf("127.0.0.1:%d", port))
	var got []string
	var times []time.Duration
	deadline := time.After(8 * time.Minute)
	for len(got) < 6 {
		select {
		case m := <-sink.Got:
			times = append(times, time.Since(back))
			got = append(got, notifytest.ParseMail(t, m.Data).Header.Get("X-Zwatch-Notification"))
		case <-deadline:
			t.Fatalf("only %v after 8 minutes", got)
		}
	}
	t.Logf("FIGURE smtp-outage: six mails queued during a 120 s outage; after the server is back: first %s, last %s (%v at %v)",
		times[0].Round(100*time.Millisecond), times[5].Round(100*time.Millisecond), got, roundAll(times))
}

// figuresHungWebhook: the webhook hangs every request until the sender
// gives up (send_timeout) while six incidents page (0, 10 … 50 s) and a
// new CRITICAL comes at 60 s; it answers again at 140 s, the requests
// still waiting included.
func figuresHungWebhook(t *testing.T, defaults func(config.NotifyConfig) config.NotifyConfig) {
	var (
		mu                   sync.Mutex
		answering            bool
		inFlight, most, reqs int
		accepted             = map[string]time.Time{}
		released             = make(chan struct{})
		order                []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ID string `json:"id"`
		}
		raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		reqs++
		hang := !answering
		if hang {
			inFlight++
			most = max(most, inFlight)
		}
		mu.Unlock()
		if hang {
			select {
			case <-r.Context().Done():
				mu.Lock()
				inFlight--
				mu.Unlock()
				return
			case <-released:
				mu.Lock()
				inFlight--
				mu.Unlock()
			}
		}
		mu.Lock()
		if _, dup := accepted[body.ID]; !dup {
			accepted[body.ID] = time.Now()
		}
		order = append(order, body.ID)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	cfg := defaults(notifytest.NotifyConfig(hookTo("hook", srv.URL)))
	stop := notifytest.RunNotifiers(t, b, cfg, delivery.Options{})
	defer stop()
	start := time.Now()
	at := func(s int) { time.Sleep(time.Until(start.Add(time.Duration(s) * time.Second))) }
	for i := range 6 {
		at(10 * i)
		notifytest.Publish(t, b, incident(fmt.Sprintf("pool%d", i), fmt.Sprintf("old-%d", i), alert.Warning))
	}
	at(60)
	crit := time.Now()
	notifytest.Publish(t, b, incident("vault", "new-crit", alert.Critical))
	at(140)
	mu.Lock()
	answering = true
	hungReqs, hungMost := reqs, most
	close(released)
	mu.Unlock()
	back := time.Now()
	notifytest.WaitFor(t, 8*time.Minute, "every notification", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(accepted) >= 7
	})
	stop()
	mu.Lock()
	defer mu.Unlock()
	var last time.Time
	for _, at := range accepted {
		if at.After(last) {
			last = at
		}
	}
	t.Logf("FIGURE hung-webhook: during the 140 s hang %d requests, at most %d at once; the new CRITICAL %s after it was queued, %s after the webhook answered again; the last of the backlog %s after; %d deliveries for 7 notifications (%v)",
		hungReqs, hungMost, accepted["new-crit"].Sub(crit).Round(100*time.Millisecond), accepted["new-crit"].Sub(back).Round(100*time.Millisecond),
		last.Sub(back).Round(100*time.Millisecond), len(order), order)
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(100 * time.Millisecond)
	}
	return out
}
