package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	sddaemon "github.com/coreos/go-systemd/v22/daemon"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// tracker records each collector's last success and error for the heartbeat,
// from which rules tell "stale data" and "blind spot".
type tracker struct {
	mu     sync.Mutex
	health map[string]facts.CollectorHealth
}

func newTracker() *tracker { return &tracker{health: map[string]facts.CollectorHealth{}} }

func (t *tracker) register(name string, interval time.Duration, disabled string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.health[name]
	h.Interval, h.Disabled = interval, disabled
	t.health[name] = h
}

func (t *tracker) result(name string, err error, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.health[name]
	h.Runs++
	if err != nil {
		h.Errors++
	}
	if err == nil {
		at := at
		h.LastOK, h.LastError, h.Disabled = &at, "", ""
	} else {
		h.LastError = err.Error()
	}
	t.health[name] = h
}

func (t *tracker) snapshot() map[string]facts.CollectorHealth {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]facts.CollectorHealth, len(t.health))
	for k, v := range t.health {
		out[k] = v
	}
	return out
}

// tracked wraps a collector so every run is recorded.
type tracked struct {
	collectors.Collector
	t *tracker
}

func (c tracked) Collect(ctx context.Context, pub collectors.Publisher) error {
	start := time.Now()
	err := c.Collector.Collect(ctx, pub)
	if ctx.Err() == nil {
		c.t.took(c.Name(), time.Since(start))
		c.t.resultOf(c.Name(), err, time.Now())
	}
	return err
}

// took records how long a collector's last run took, for /metrics: a tool
// that slows down is seen before it times out.
func (t *tracker) took(name string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.health[name]
	h.LastDuration = d
	t.health[name] = h
}

// result records a run; a source that does not exist here is a blind spot
// with its reason, not a stream of failures.
func (t *tracker) resultOf(name string, err error, at time.Time) {
	if errors.Is(err, collectors.ErrNotAvailable) {
		t.mu.Lock()
		h := t.health[name]
		h.Disabled = err.Error()
		t.health[name] = h
		t.mu.Unlock()
		return
	}
	t.result(name, err, at)
}

// heartbeat publishes proof of life on the bus and, only while the whole
// pipeline works, pings the external heartbeat URL and feeds systemd's
// watchdog, so that a wedged or deaf daemon is restarted and noticed from
// outside. With a canary (where the rule engine runs), working means the
// heartbeat's canary came back through rules and outbox, and the state
// storage is not failing; an agent only needs the bus to accept it.
type heartbeat struct {
	pub      collectors.Publisher
	tracker  *tracker
	started  time.Time
	every    time.Duration
	url      string
	urlEvery time.Duration
	client   *http.Client
	log      *slog.Logger
	canary   *delivery.Canary // nil on an agent
	// notify sends a systemd notification (sddaemon.SdNotify).
	notify func(state string)
}

func (h *heartbeat) run(ctx context.Context) error {
	wd, _ := sddaemon.SdWatchdogEnabled(false)
	tick := h.every
	if wd > 0 && wd/2 < tick {
		tick = wd / 2
	}
	if h.notify == nil {
		h.notify = func(state string) { _, _ = sddaemon.SdNotify(false, state) }
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var lastPing time.Time
	lastWhy := ""
	for {
		now := time.Now()
		why := h.beat(ctx, min(max(tick/2, 2*time.Second), 10*time.Second))
		switch {
		case ctx.Err() != nil:
			return nil
		case why != "":
			// No watchdog ping and no URL ping: if this lasts, systemd
			// restarts us and the outside watcher raises its alarm.
			if why != lastWhy {
				h.log.Error("zwatch is not healthy: health signals stopped", "why", why)
			}
			h.notify("STATUS=UNHEALTHY: " + why)
		default:
			if lastWhy != "" {
				h.log.Info("zwatch is healthy again: the canary went through rules and outbox")
			}
			if wd > 0 {
				h.notify(sddaemon.SdNotifyWatchdog)
			}
			h.notify("STATUS=healthy")
			if h.url != "" && now.Sub(lastPing) >= h.urlEvery {
				if perr := h.ping(ctx); perr != nil {
					h.log.Warn("heartbeat URL ping failed", "url", h.url, "err", perr)
				} else {
					lastPing = now
				}
			}
		}
		lastWhy = why
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// beat publishes one heartbeat and says what is wrong, or "".
func (h *heartbeat) beat(ctx context.Context, wait time.Duration) string {
	hb := facts.HeartbeatData{Version: Version, Started: h.started, Collectors: h.tracker.snapshot()}
	if h.canary == nil {
		if err := h.pub.Publish(ctx, facts.Heartbeat.Name(), "zwatch", hb); err != nil {
			return "heartbeat not accepted by the bus: " + err.Error()
		}
		return ""
	}
	return h.canary.Check(ctx, facts.Heartbeat.Name(), hb, wait)
}

func (h *heartbeat) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}
