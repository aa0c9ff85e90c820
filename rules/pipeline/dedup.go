package pipeline

import (
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Stage 1, dedup: the conditions a scope's rules report become tracked
// alerts, one per fingerprint; a new one is pending until its `for`
// passes, and one whose condition is no longer reported resolves.

// Cond is a condition that holds now, as a rule reported it.
type Cond struct {
	Name        string
	Severity    alert.Severity
	Labels      map[string]string // alertname and host included
	Summary     string
	Description string
	Evidence    map[string]string
	Replacement *alert.Replacement
	// News identifies an event the person must hear of even though the
	// alert already fires (a new scrub's end, a newer failed self-test):
	// when it grows past what was last sent, the alert is sent again.
	News uint64
	// Count is a rising count (an error total, a raw SMART counter). Every
	// increase is not news: the alert is sent again only when the count
	// reaches the next power of ten (countLevel), so a scrub that finds a
	// few more checksum errors each minute pages once, not once a minute.
	Count  uint64
	Serial string
	Pool   string
}

// Hooks are the engine's decisions about one scope's alerts that Dedup
// asks for: whether an alert is about a pool that is missing. Either may
// be nil.
type Hooks struct {
	// Reported is told of each alert a condition reported, once updated.
	Reported func(t *Tracked)
	// Keep reports whether an alert whose condition is no longer reported
	// is kept (firing) instead of resolved.
	Keep func(t *Tracked) bool
	// Cause is the timing of the fact the conditions were judged from; nil
	// for a re-evaluation no fact started (a tick).
	Cause *alert.Timing
}

// Dedup replaces the conditions of one scope (the set one kind of fact
// decides) with n new ones, cond(i) being the i-th: new ones start, gone
// ones resolve. It reports whether b changed. cond returns a value so that
// the engine's conditions need not be copied into a slice first.
func (p *Pipeline) Dedup(b *Book, scope string, n int, cond func(i int) Cond, hooks Hooks, now time.Time) (changed bool) {
	seen := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		c := cond(i)
		fp := alert.Fingerprint(c.Labels)
		if seen[fp] {
			continue // a rule reported the same thing twice: keep the first
		}
		seen[fp] = true
		t := b.Alerts[fp]
		if t != nil && t.A.State == alert.Resolved {
			// It came back before its resolved notice went out: the person
			// still knows it as firing, so it simply continues.
			t.A.State = alert.Firing
			t.A.EndsAt = nil
		}
		if t == nil {
			t = &Tracked{A: alert.Alert{Name: c.Name, Labels: c.Labels, Fingerprint: fp, State: alert.Pending, StartsAt: now}}
			t.For = p.cfg.For[c.Name]
			b.Alerts[fp] = t
			t.setCause(hooks.Cause)
		} else if c.Severity.Rank() > t.A.Severity.Rank() || max(c.News, countLevel(c.Count)) > t.News {
			t.setCause(hooks.Cause)
		}
		p.unkeep(t)
		t.Scope = scope
		t.A.Severity = c.Severity
		t.A.Summary = c.Summary
		t.A.Description = c.Description
		t.A.Evidence = c.Evidence
		t.A.Replacement = c.Replacement
		if n := max(c.News, countLevel(c.Count)); n > t.News {
			t.News = n
		}
		if c.Serial != "" {
			t.Serial = c.Serial
		}
		if c.Pool != "" {
			t.Pool = c.Pool
		}
		if t.A.State == alert.Pending && now.Sub(t.A.StartsAt) >= t.For {
			t.A.State = alert.Firing
		}
		if hooks.Reported != nil {
			hooks.Reported(t)
		}
		changed = true
	}
	for fp, t := range b.Alerts {
		if t.Scope != scope || seen[fp] || t.A.State == alert.Resolved || hooks.Keep != nil && hooks.Keep(t) {
			continue
		}
		t.setCause(hooks.Cause)
		p.Resolve(b, fp, t, now)
		changed = true
	}
	return changed
}

// Resolve ends an alert. One that was never sent vanishes silently: the
// person never heard of it, so there is nothing to take back.
func (p *Pipeline) Resolve(b *Book, fp string, t *Tracked, now time.Time) {
	p.unkeep(t)
	if t.LastSent == nil {
		delete(b.Alerts, fp)
		return
	}
	end := now
	t.A.State = alert.Resolved
	t.A.EndsAt = &end
}

func (p *Pipeline) unkeep(t *Tracked) {
	if p.cfg.Unkeep != nil {
		p.cfg.Unkeep(t)
	}
}

// promote moves pending alerts whose `for` has passed to firing.
func (p *Pipeline) promote(b *Book, now time.Time) (changed bool) {
	for _, t := range b.Alerts {
		if t.A.State == alert.Pending && now.Sub(t.A.StartsAt) >= t.For {
			t.A.State = alert.Firing
			changed = true
		}
	}
	return changed
}

// setCause records the timing of the fact that gave t something to send;
// a tick (no fact) leaves the last one.
func (t *Tracked) setCause(c *alert.Timing) {
	if c != nil {
		cause := *c
		t.Cause = &cause
	}
}

// countLevel is the step of the threshold ladder a count has reached: 0
// for none, 1 for 1–9, 2 for 10–99, 3 for 100–999, … A count is news again
// only when its level rises.
func countLevel(n uint64) uint64 {
	var l uint64
	for ; n > 0; n /= 10 {
		l++
	}
	return l
}
