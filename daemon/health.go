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
	err := c.Collector.Collect(ctx, pub)
	if ctx.Err() == nil {
		c.t.resultOf(c.Name(), err, time.Now())
	}
	return err
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

// heartbeat publishes proof of life on the bus, pings the external heartbeat
// URL, and feeds systemd's watchdog only while the bus accepts messages, so
// that a wedged daemon is restarted and a dead one is noticed from outside.
type heartbeat struct {
	pub      collectors.Publisher
	tracker  *tracker
	started  time.Time
	every    time.Duration
	url      string
	urlEvery time.Duration
	client   *http.Client
	log      *slog.Logger
}

func (h *heartbeat) run(ctx context.Context) error {
	wd, _ := sddaemon.SdWatchdogEnabled(false)
	tick := h.every
	if wd > 0 && wd/2 < tick {
		tick = wd / 2
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var lastPing time.Time
	for {
		now := time.Now()
		err := h.pub.Publish(ctx, facts.KindHeartbeat, "zwatch", facts.Heartbeat{
			Version: Version, Started: h.started, Collectors: h.tracker.snapshot(),
		})
		switch {
		case err != nil && ctx.Err() == nil:
			// No watchdog ping: if the bus stays wedged, systemd restarts us.
			h.log.Error("heartbeat not accepted by the bus", "err", err)
		case err == nil && wd > 0:
			_, _ = sddaemon.SdNotify(false, sddaemon.SdNotifyWatchdog)
		}
		if err == nil && h.url != "" && now.Sub(lastPing) >= h.urlEvery {
			if perr := h.ping(ctx); perr != nil {
				h.log.Warn("heartbeat URL ping failed", "url", h.url, "err", perr)
			} else {
				lastPing = now
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
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
