package rules

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/silence"
)

// Silences (package silence) act where the engine decides that an alert is
// due: a firing alert an active silence mutes is not due, so it leaves its
// group's notification as Alertmanager removes silenced alerts from a
// group. Its page is then never sent, and an alert never paged vanishes
// without a resolved notice; one paged before the silence still gets its
// resolved notice (the person saw the page). A rise above the silence's
// MaxSeverity is not muted. When the silence ends, what still fires is due
// again by the usual rules: a page never sent goes now, a repeat when its
// interval has passed since the last one.

// SilenceExpiredAlert names the one-line info notice sent when a silence
// ends by itself.
const SilenceExpiredAlert = "SilenceExpired"

// SetSilences gives the engine the silences to apply (the runner reads
// them from the state bucket); expired ones are harmless.
func (e *Engine) SetSilences(list []silence.Silence) { e.silences = list }

// silencedBy returns the silence that keeps t from being sent at now.
func (e *Engine) silencedBy(t *tracked, now time.Time) *silence.Silence {
	for i := range e.silences {
		s := &e.silences[i]
		if s.Mutes(func(name string) string { return silenceLabel(t, name) }, t.A.Severity, now) {
			return s
		}
	}
	return nil
}

// silenceLabel is a label as silences see it: the alert's own labels, plus
// severity, and the pool and serial of a disk the engine joined to a pool
// (a SMART alert carries only its disk label).
func silenceLabel(t *tracked, name string) string {
	if v := t.A.Labels[name]; v != "" {
		return v
	}
	switch name {
	case "severity":
		return string(t.A.Severity)
	case "pool":
		return t.Pool
	case "serial":
		return t.Serial
	}
	return ""
}

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
		return t.A.State == alert.Firing && ms.Matches(func(name string) string { return silenceLabel(t, name) })
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

// maxNamedInNotice bounds the alerts an expiry notice names.
const maxNamedInNotice = 5

// expiryNotice is the notice that s ended by itself: one info alert whose
// summary says which alerts it silenced still fire and so page again.
// host is the host whose subject carries it when no alert names one.
func (e *Engine) expiryNotice(s *silence.Silence, host string, now time.Time) alert.Notification {
	var still []string
	for _, name := range e.hostNames() {
		h := e.hosts[name]
		for _, fp := range sortedKeys(h.Alerts) {
			t := h.Alerts[fp]
			if t.A.State != alert.Firing || t.Inhibited || t.A.Severity.Rank() > s.MaxSeverity.Rank() ||
				!s.Matchers.Matches(func(n string) string { return silenceLabel(t, n) }) {
				continue
			}
			if host == "" {
				host = name
			}
			still = append(still, t.A.Name+" on "+name+aboutShort(t.A.Labels))
		}
	}
	line := fmt.Sprintf("silence %s for %s expired; ", s.Short(), s.Matchers)
	switch {
	case len(still) == 0:
		line += "no alert it silenced still fires"
	case len(still) > maxNamedInNotice:
		line += fmt.Sprintf("alerts that still fire page again: %s and %d more", strings.Join(still[:maxNamedInNotice], ", "), len(still)-maxNamedInNotice)
	default:
		line += "alerts that still fire page again: " + strings.Join(still, ", ")
	}
	labels := map[string]string{"alertname": SilenceExpiredAlert, "host": host, "silence": s.ID}
	a := alert.Alert{
		Name: SilenceExpiredAlert, Severity: alert.Info, State: alert.Firing, Labels: labels,
		Fingerprint: alert.Fingerprint(labels), Summary: line, StartsAt: s.EndsAt.UTC(),
	}
	return alert.Notification{ID: ExpiryNoticeID(s.ID), Host: host, Status: alert.Firing, Alerts: []alert.Alert{a}, Created: now.UTC(), Test: e.cfg.MarkTest}
}

// ExpiryNoticeID is the notification ID of a silence's expiry notice: the
// same for every try, so the outbox drops a second copy.
func ExpiryNoticeID(id string) string { return "silence-expired-" + id }

// aboutShort is " (pool=tank, vdev=sdb)" for the labels that say what an
// alert is about, or "".
func aboutShort(l map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(l) {
		if k != "alertname" && k != "host" && l[k] != "" {
			parts = append(parts, k+"="+l[k])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
