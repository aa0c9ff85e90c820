package rules

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/silence"
)

// Current is the state bucket read once: every host's alerts and the
// silences, as `zwatch alerts`, `zwatch silence` and the status page show
// them.
type Current struct {
	e        *Engine
	silences []silence.Silence
	now      time.Time
}

// ReadCurrent reads every host's state and the silences from the bus.
// Silences that cannot be read are left out (the engine logs them).
func ReadCurrent(ctx context.Context, b *bus.Bus) (*Current, error) {
	// Every host's key in one batched read, not a key listing and a read per
	// key: the views and the alerts snapshot ask for this every few seconds.
	states, err := bus.KVLast(ctx, b.JS, bus.StateBucket, keyPrefix+">")
	if err != nil {
		return nil, fmt.Errorf("read rule state from %s: %w", bus.StateBucket, err)
	}
	e := NewEngine(config.DefaultRules(), nil)
	for _, v := range states {
		if h := decodeHost(v.Data); h != nil {
			e.hosts[h.Host] = h
		}
	}
	list, _, err := silence.List(ctx, b.JS, bus.StateBucket)
	if err != nil {
		return nil, err
	}
	e.SetSilences(list)
	return &Current{e: e, silences: list, now: time.Now()}, nil
}

// Active is every host's pending and firing alerts, inhibited ones
// included, each one a silence mutes marked with it.
func (c *Current) Active() []alert.Alert {
	return c.alerts(func(t *tracked) bool { return t.A.State != alert.Resolved })
}

// Matching is the firing alerts ms matches, whatever their severity;
// those a silence mutes are marked.
func (c *Current) Matching(ms silence.Matchers) []alert.Alert {
	return c.alerts(func(t *tracked) bool {
		return t.A.State == alert.Firing && ms.Matches(func(name string) string { return silence.Label(&t.A, t.Pool, t.Serial, name) })
	})
}

// Silences are the silences not yet expired (and, with expired, those
// kept after their end), by start.
func (c *Current) Silences(expired bool) []silence.Silence {
	var out []silence.Silence
	for _, s := range c.silences {
		if expired || s.State(c.now) != silence.Expired {
			out = append(out, s)
		}
	}
	return out
}

// Now is when the state was read; states are as of then.
func (c *Current) Now() time.Time { return c.now }

func (c *Current) alerts(keep func(*tracked) bool) []alert.Alert {
	var out []alert.Alert
	for _, name := range c.e.hostNames() {
		for _, t := range c.e.hosts[name].Alerts {
			if !keep(t) {
				continue
			}
			a := t.A
			if t.A.State != alert.Resolved {
				if s := c.e.silencedBy(t, c.now); s != nil {
					a.Silenced = s.Mark()
				}
			}
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessAlert(&out[i], &out[j]) })
	return out
}
