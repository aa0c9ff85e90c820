package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Stage 5, repeat/resolve: what of an alert the person has not been told
// (a first page, a rise in severity, news, a repeat when its interval has
// passed, a resolved notice after its page) goes out when its group is
// flushed, as one notification per group; then gc bounds what is left.
// Flush hands the notifications back: the runner puts them on the outbox.

// unsent reports whether t has something to send, past inhibit and
// silence, and whether that is a repeat.
func (p *Pipeline) unsent(t *Tracked, now time.Time) (due, repeat bool) {
	switch t.A.State {
	case alert.Resolved:
		return t.LastSent != nil, false
	case alert.Firing:
		if t.LastSent == nil || t.A.Severity.Rank() > t.SentSeverity.Rank() || t.News > t.SentNews {
			return true, false
		}
		// An acknowledged alert is not repeated: someone is on it.
		if r := p.repeatOf(t.A.Severity); r > 0 && now.Sub(*t.LastSent) >= r && !t.A.Ack.Covers(&t.A) {
			return true, true
		}
	}
	return false, false
}

func (p *Pipeline) repeatOf(s alert.Severity) time.Duration {
	switch s {
	case alert.Critical:
		return p.cfg.RepeatCritical
	case alert.Warning:
		return p.cfg.RepeatWarning
	}
	return 0 // info is told once
}

// Flush sends every group of host's book b whose time has come, and
// reports whether b changed. before, when not nil, is called once before
// the first notification is made (the runner reads the silences then).
func (p *Pipeline) Flush(b *Book, host string, before func(), now time.Time) ([]alert.Notification, bool) {
	var keys []string
	for k, g := range b.Groups {
		if !g.FlushAt.After(now) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, false
	}
	if before != nil {
		before()
	}
	sort.Strings(keys)
	var out []alert.Notification
	for _, k := range keys {
		g := b.Groups[k]
		delete(b.Groups, k)
		for gk, at := range b.Flushed {
			// Older than group_wait behaves as never flushed: keep state small.
			if now.Sub(at) > p.cfg.GroupWait && gk != k {
				delete(b.Flushed, gk)
			}
		}
		var members []*Tracked
		for _, t := range b.Alerts {
			if t.Group != k {
				continue
			}
			if due, _ := p.due(t, now); due {
				members = append(members, t)
			}
		}
		if len(members) == 0 {
			continue
		}
		sort.Slice(members, func(i, j int) bool { return Less(&members[i].A, &members[j].A) })
		n := alert.Notification{GroupKey: k, Host: host, Status: alert.Resolved, Created: g.FlushAt.UTC(), Test: p.cfg.MarkTest,
			Escalated: escalatedOf(b, k)}
		idh := sha256.New()
		fmt.Fprintf(idh, "%s|%d", k, g.FlushAt.UnixNano())
		for _, t := range members {
			a := t.A
			a.Labels = CopyMap(a.Labels)
			if !a.Ack.Covers(&a) {
				a.Ack = nil // worse than acknowledged: this page asks anew
			}
			n.Alerts = append(n.Alerts, a)
			if a.State == alert.Firing {
				n.Status = alert.Firing
			}
			fmt.Fprintf(idh, "|%s/%s/%s/%d", a.Fingerprint, a.State, a.Severity, t.News)
		}
		n.ID = hex.EncodeToString(idh.Sum(nil)[:12])
		n.Timing = p.timingOf(members, now)
		if n.Status == alert.Firing {
			// Only a page opens the group_wait window: a new fault right
			// after a "resolved" notice must not wait.
			b.Flushed[k] = now
		}
		for _, t := range members {
			if t.A.State == alert.Resolved {
				delete(b.Alerts, t.A.Fingerprint)
				continue
			}
			sent := now
			t.LastSent, t.SentSeverity, t.SentNews = &sent, t.A.Severity, t.News
			if t.A.Severity == alert.Critical && t.CriticalAt == nil {
				t.CriticalAt = &sent // the escalation's clock starts
			}
			if t.A.Ack != nil && !t.A.Ack.Covers(&t.A) {
				t.A.Ack = nil // it got worse and paged again: to be taken on anew
			}
			t.Cause = nil // told: a repeat carries none
		}
		out = append(out, n)
	}
	gc(b)
	return out, true
}

// timingOf is the timing a notification of members carries: that of the
// earliest fact that gave one of them something to send other than a
// repeat. None when all are repeats, or no fact is known.
func (p *Pipeline) timingOf(members []*Tracked, now time.Time) *alert.Timing {
	var first *alert.Timing
	for _, t := range members {
		if _, repeat := p.unsent(t, now); t.Cause == nil || repeat {
			continue // a repeat: its cause was told before
		}
		if first == nil || t.Cause.Read.Before(first.Read) {
			first = t.Cause
		}
	}
	if first == nil {
		return nil
	}
	out := *first
	return &out
}

// gc drops resolved alerts nobody will be told about and bounds the rest.
func gc(b *Book) {
	n := 0
	for fp, t := range b.Alerts {
		if t.A.State != alert.Resolved {
			continue
		}
		if t.LastSent == nil {
			delete(b.Alerts, fp)
			continue
		}
		n++
	}
	if n <= MaxResolved {
		return
	}
	// Far more resolutions than any person reads: drop the oldest.
	var old []*Tracked
	for _, t := range b.Alerts {
		if t.A.State == alert.Resolved {
			old = append(old, t)
		}
	}
	sort.Slice(old, func(i, j int) bool { return old[i].A.EndsAt.Before(*old[j].A.EndsAt) })
	for _, t := range old[:n-MaxResolved] {
		delete(b.Alerts, t.A.Fingerprint)
	}
}
