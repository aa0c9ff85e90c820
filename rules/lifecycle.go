package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// cond is what a rule reports: a condition that holds now. The lifecycle
// turns conditions into alerts (pending → firing → resolved).
type cond struct {
	name     string
	severity alert.Severity
	labels   map[string]string
	summary  string
	desc     string
	evidence map[string]string
	repl     *alert.Replacement
	// news identifies an event the person must hear of even though the
	// alert already fires (a new scrub's end, a newer failed self-test):
	// when it grows past what was last sent, the alert is sent again.
	news uint64
	// count is a rising count (an error total, a raw SMART counter). Every
	// increase is not news: the alert is sent again only when the count
	// reaches the next power of ten (countLevel), so a scrub that finds a
	// few more checksum errors each minute pages once, not once a minute.
	count  uint64
	serial string
	pool   string
}

// apply replaces the conditions of one scope (the set one kind of fact
// decides) with conds: new ones start, gone ones resolve.
func (e *Engine) apply(h *hostState, scope string, conds []cond, now time.Time) {
	seen := make(map[string]bool, len(conds))
	for i := range conds {
		c := &conds[i]
		fp := alert.Fingerprint(c.labels)
		if seen[fp] {
			continue // a rule reported the same thing twice: keep the first
		}
		seen[fp] = true
		t := h.Alerts[fp]
		if t != nil && t.A.State == alert.Resolved {
			// It came back before its resolved notice went out: the person
			// still knows it as firing, so it simply continues.
			t.A.State = alert.Firing
			t.A.EndsAt = nil
		}
		if t == nil {
			t = &tracked{A: alert.Alert{Name: c.name, Labels: c.labels, Fingerprint: fp, State: alert.Pending, StartsAt: now}}
			t.For = e.forOf(c.name)
			h.Alerts[fp] = t
		}
		unkeep(t)
		t.Scope = scope
		t.A.Severity = c.severity
		t.A.Summary = c.summary
		t.A.Description = c.desc
		t.A.Evidence = c.evidence
		t.A.Replacement = c.repl
		if n := max(c.news, countLevel(c.count)); n > t.News {
			t.News = n
		}
		if c.serial != "" {
			t.Serial = c.serial
		}
		if c.pool != "" {
			t.Pool = c.pool
		}
		if t.A.State == alert.Pending && now.Sub(t.A.StartsAt) >= t.For {
			t.A.State = alert.Firing
		}
		e.markReported(h, t, scope)
		h.dirty = true
	}
	for fp, t := range h.Alerts {
		if t.Scope != scope || seen[fp] || t.A.State == alert.Resolved || e.keep(h, t, scope) {
			continue
		}
		e.resolve(h, fp, t, now)
	}
}

// resolve ends an alert. One that was never sent vanishes silently: the
// person never heard of it, so there is nothing to take back.
func (e *Engine) resolve(h *hostState, fp string, t *tracked, now time.Time) {
	h.dirty = true
	unkeep(t)
	if t.LastSent == nil {
		delete(h.Alerts, fp)
		return
	}
	end := now
	t.A.State = alert.Resolved
	t.A.EndsAt = &end
}

// promote moves pending alerts whose `for` has passed to firing.
func (e *Engine) promote(h *hostState, now time.Time) {
	for _, t := range h.Alerts {
		if t.A.State == alert.Pending && now.Sub(t.A.StartsAt) >= t.For {
			t.A.State = alert.Firing
			h.dirty = true
		}
	}
}

// due reports whether t has something the person has not been told.
func (e *Engine) due(t *tracked, now time.Time) (due, repeat bool) {
	if t.Inhibited {
		return false, false
	}
	switch t.A.State {
	case alert.Resolved:
		return t.LastSent != nil, false
	case alert.Firing:
		if len(e.silences) > 0 && e.silencedBy(t, now) != nil {
			return false, false
		}
		if t.LastSent == nil || t.A.Severity.Rank() > t.SentSeverity.Rank() || t.News > t.SentNews {
			return true, false
		}
		if r := e.repeatOf(t.A.Severity); r > 0 && now.Sub(*t.LastSent) >= r {
			return true, true
		}
	}
	return false, false
}

// groupKey is host plus the group_by labels; an alert without a pool label
// (a SMART alert) joins its disk's pool group when the disk is in one.
func (e *Engine) groupKey(t *tracked) string {
	var b strings.Builder
	b.WriteString("host=")
	b.WriteString(t.A.Labels["host"])
	for _, l := range e.cfg.GroupBy {
		v := t.A.Labels[l]
		if v == "" && l == "pool" {
			v = t.Pool
		}
		b.WriteByte(',')
		b.WriteString(l)
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// schedule gives every group with news a flush time. The first news of a
// group that has been quiet for group_wait goes out at the next tick, so a
// pulled disk reaches the phone within a second or two; it already carries
// every device one observation saw fail together. News arriving while the
// group is recent waits group_wait, so a slower cascade (an enclosure
// dropping its disks one by one) becomes one follow-up, not one page each.
// Repeats, the first page of an AtOnce alert, and a group's first critical
// page after warnings go at once.
func (e *Engine) schedule(h *hostState, now time.Time) {
	for _, t := range h.Alerts {
		due, repeat := e.due(t, now)
		if !due {
			continue
		}
		if t.Group == "" {
			t.Group = e.groupKey(t)
		}
		g := h.Groups[t.Group]
		at := now.Add(e.cfg.GroupWait.D())
		first := t.LastSent == nil && t.A.State == alert.Firing
		if last, ok := h.Flushed[t.Group]; repeat || first && e.rules.atOnce[t.A.Name] ||
			first && t.A.Severity == alert.Critical && !e.criticalSentLately(h, t.Group, now) ||
			g == nil && (!ok || now.Sub(last) >= e.cfg.GroupWait.D()) {
			at = now
		}
		if !repeat && newsOnly(t) {
			// A count past its next power of ten, or a newer event of the
			// same kind, of an alert the person was paged for moments ago
			// waits group_interval: a disk erroring through a scrub pages
			// once, then once more with the count it reached.
			at = laterOf(at, t.LastSent.Add(e.cfg.GroupInterval.D()))
		}
		if g == nil {
			h.Groups[t.Group] = &groupState{FlushAt: at}
			h.dirty = true
		} else if at.Before(g.FlushAt) {
			g.FlushAt = at
			h.dirty = true
		}
	}
}

// newsOnly: t was sent and has news, but neither a higher severity nor a
// first page.
func newsOnly(t *tracked) bool {
	return t.LastSent != nil && t.A.State == alert.Firing && t.News > t.SentNews &&
		t.A.Severity.Rank() <= t.SentSeverity.Rank()
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// criticalSentLately reports whether group had a critical page within
// group_wait. The first critical of a group that only paged warnings (the
// kernel's I/O errors, then ZFS faulting the disk) does not wait behind
// them; a cascade of criticals still folds into one follow-up.
func (e *Engine) criticalSentLately(h *hostState, group string, now time.Time) bool {
	for _, t := range h.Alerts {
		if t.Group == group && t.LastSent != nil && t.SentSeverity == alert.Critical && now.Sub(*t.LastSent) < e.cfg.GroupWait.D() {
			return true
		}
	}
	return false
}

// DueFor reports whether a notification of host is ready to go now, so
// that the runner can send it at once instead of at its next tick.
func (e *Engine) DueFor(host string, now time.Time) bool {
	h := e.hosts[host]
	if h == nil {
		return false
	}
	for _, g := range h.Groups {
		if !g.FlushAt.After(now) {
			return true
		}
	}
	return false
}

// flush sends every group whose time has come.
func (e *Engine) flush(h *hostState, now time.Time) []alert.Notification {
	var keys []string
	for k, g := range h.Groups {
		if !g.FlushAt.After(now) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	if e.beforeFlush != nil {
		e.beforeFlush()
	}
	sort.Strings(keys)
	var out []alert.Notification
	for _, k := range keys {
		g := h.Groups[k]
		delete(h.Groups, k)
		h.dirty = true
		for gk, at := range h.Flushed {
			// Older than group_wait behaves as never flushed: keep state small.
			if now.Sub(at) > e.cfg.GroupWait.D() && gk != k {
				delete(h.Flushed, gk)
			}
		}
		var members []*tracked
		var fps []string
		for fp, t := range h.Alerts {
			if t.Group != k {
				continue
			}
			if due, _ := e.due(t, now); due {
				members = append(members, t)
				fps = append(fps, fp)
			}
		}
		if len(members) == 0 {
			continue
		}
		sort.Slice(members, func(i, j int) bool { return lessAlert(&members[i].A, &members[j].A) })
		n := alert.Notification{GroupKey: k, Host: h.Host, Status: alert.Resolved, Created: g.FlushAt.UTC(), Test: e.cfg.MarkTest}
		idh := sha256.New()
		fmt.Fprintf(idh, "%s|%d", k, g.FlushAt.UnixNano())
		for _, t := range members {
			a := t.A
			a.Labels = copyMap(a.Labels)
			n.Alerts = append(n.Alerts, a)
			if a.State == alert.Firing {
				n.Status = alert.Firing
			}
			fmt.Fprintf(idh, "|%s/%s/%s/%d", a.Fingerprint, a.State, a.Severity, t.News)
		}
		n.ID = hex.EncodeToString(idh.Sum(nil)[:12])
		if n.Status == alert.Firing {
			// Only a page opens the group_wait window: a new fault right
			// after a "resolved" notice must not wait.
			h.Flushed[k] = now
		}
		for _, t := range members {
			if t.A.State == alert.Resolved {
				delete(h.Alerts, t.A.Fingerprint)
				continue
			}
			sent := now
			t.LastSent, t.SentSeverity, t.SentNews = &sent, t.A.Severity, t.News
		}
		out = append(out, n)
	}
	e.gc(h)
	return out
}

// gc drops resolved alerts nobody will be told about and bounds the rest.
func (e *Engine) gc(h *hostState) {
	n := 0
	for fp, t := range h.Alerts {
		if t.A.State != alert.Resolved {
			continue
		}
		if t.LastSent == nil {
			delete(h.Alerts, fp)
			continue
		}
		n++
	}
	if n <= maxResolved {
		return
	}
	// Far more resolutions than any person reads: drop the oldest.
	var old []*tracked
	for _, t := range h.Alerts {
		if t.A.State == alert.Resolved {
			old = append(old, t)
		}
	}
	sort.Slice(old, func(i, j int) bool { return old[i].A.EndsAt.Before(*old[j].A.EndsAt) })
	for _, t := range old[:n-maxResolved] {
		delete(h.Alerts, t.A.Fingerprint)
	}
}

// lessAlert orders alerts for people: firing before resolved, worst first.
func lessAlert(a, b *alert.Alert) bool {
	if (a.State == alert.Firing) != (b.State == alert.Firing) {
		return a.State == alert.Firing
	}
	if a.Severity.Rank() != b.Severity.Rank() {
		return a.Severity.Rank() > b.Severity.Rank()
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Fingerprint < b.Fingerprint
}

func (e *Engine) forOf(name string) time.Duration {
	if d, ok := e.cfg.For[name]; ok {
		return d.D()
	}
	return e.rules.defaultFor[name]
}

func (e *Engine) repeatOf(s alert.Severity) time.Duration {
	switch s {
	case alert.Critical:
		return e.cfg.RepeatCritical.D()
	case alert.Warning:
		return e.cfg.RepeatWarning.D()
	}
	return 0 // info is told once
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
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

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
