package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Escalation (notify.escalation): a group with a critical alert that was
// paged and that nobody acknowledged goes to the next step's channels once
// that step's delay since its first critical page has passed, and again at
// each later step. An acknowledgement stops the chain; the channels reached
// hear the rest of the incident (Notification.Escalated), its end included.

// escalation reports the step t's group is due for at now (from 1), or 0.
func (p *Pipeline) escalation(t *Tracked, now time.Time) int {
	if t.A.State != alert.Firing || t.A.Severity != alert.Critical || t.CriticalAt == nil ||
		t.Escalated >= len(p.cfg.Escalate) || t.Inhibited || t.A.Ack.Covers(&t.A) || p.silenced(t, now) {
		return 0
	}
	if now.Sub(*t.CriticalAt) < p.cfg.Escalate[t.Escalated] {
		return 0
	}
	return t.Escalated + 1
}

// Escalate makes the escalation pages due at now in b, one per group, and
// reports whether b changed.
func (p *Pipeline) Escalate(b *Book, host string, now time.Time) ([]alert.Notification, bool) {
	if len(p.cfg.Escalate) == 0 {
		return nil, false
	}
	steps := map[string]int{}
	// since is, per group, the earliest first critical page among the
	// alerts that make its step due: what the page's ID is made of, so
	// that an engine making it again from the same saved state (it was
	// published, and the engine stopped before its state was saved) makes
	// the same ID, which the outbox's duplicate window drops.
	since := map[string]time.Time{}
	changed := false
	for _, t := range b.Alerts {
		if t.CriticalAt != nil && (t.A.Severity != alert.Critical || t.A.State != alert.Firing) {
			// No longer critical: a later rise starts the clock again.
			t.CriticalAt, changed = nil, true
		}
		switch step := p.escalation(t, now); {
		case step == 0:
		case step > steps[t.Group]:
			steps[t.Group], since[t.Group] = step, *t.CriticalAt
		case step == steps[t.Group] && t.CriticalAt.Before(since[t.Group]):
			since[t.Group] = *t.CriticalAt
		}
	}
	if len(steps) == 0 {
		return nil, changed
	}
	keys := make([]string, 0, len(steps))
	for k := range steps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []alert.Notification
	for _, k := range keys {
		step := steps[k]
		n := alert.Notification{GroupKey: k, Host: host, Status: alert.Firing, Created: now.UTC(), Test: p.cfg.MarkTest,
			Escalation: step, Escalated: step}
		idh := sha256.New()
		fmt.Fprintf(idh, "escalation|%s|%d|%d", k, step, since[k].UnixNano())
		var members []*Tracked
		for _, t := range b.Alerts {
			// The whole incident as it stands: what the person reached
			// now needs to know, acknowledged parts and all.
			if t.Group == k && t.A.State == alert.Firing && !t.Inhibited && t.LastSent != nil {
				members = append(members, t)
			}
		}
		sort.Slice(members, func(i, j int) bool { return Less(&members[i].A, &members[j].A) })
		for _, t := range members {
			a := t.A
			a.Labels = CopyMap(a.Labels)
			n.Alerts = append(n.Alerts, a)
			fmt.Fprintf(idh, "|%s", a.Fingerprint)
			t.Escalated = max(t.Escalated, step)
		}
		n.ID = hex.EncodeToString(idh.Sum(nil)[:12])
		out = append(out, n)
	}
	return out, true
}

// escalatedOf is how far the incident of members has escalated.
func escalatedOf(b *Book, group string) int {
	n := 0
	for _, t := range b.Alerts {
		if t.Group == group {
			n = max(n, t.Escalated)
		}
	}
	return n
}
