package pipeline

import (
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Stage 2, group: alerts join a group by host and the group_by labels,
// and a group with something due (inhibit, silence and repeat say what)
// gets the time it is flushed at.

// groupKey is host plus the group_by labels; an alert without a pool label
// (a SMART alert) joins its disk's pool group when the disk is in one.
func (p *Pipeline) groupKey(t *Tracked) string {
	var b strings.Builder
	b.WriteString("host=")
	b.WriteString(t.A.Labels["host"])
	for _, l := range p.cfg.GroupBy {
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
func (p *Pipeline) schedule(b *Book, now time.Time) (changed bool) {
	for _, t := range b.Alerts {
		due, repeat := p.due(t, now)
		if !due {
			continue
		}
		if t.Group == "" {
			joinGroup(t, p.groupKey(t))
		}
		g := b.Groups[t.Group]
		at := now.Add(p.cfg.GroupWait)
		first := t.LastSent == nil && t.A.State == alert.Firing
		if last, ok := b.Flushed[t.Group]; repeat || first && p.cfg.AtOnce[t.A.Name] ||
			first && t.A.Severity == alert.Critical && !p.criticalSentLately(b, t.Group, now) ||
			g == nil && (!ok || now.Sub(last) >= p.cfg.GroupWait) {
			at = now
		}
		if !repeat && newsOnly(t) {
			// A count past its next power of ten, or a newer event of the
			// same kind, of an alert the person was paged for moments ago
			// waits group_interval: a disk erroring through a scrub pages
			// once, then once more with the count it reached.
			at = laterOf(at, t.LastSent.Add(p.cfg.GroupInterval))
		}
		if g == nil {
			b.Groups[t.Group] = &GroupState{FlushAt: at}
			changed = true
		} else if at.Before(g.FlushAt) {
			g.FlushAt = at
			changed = true
		}
	}
	return changed
}

// newsOnly: t was sent and has news, but neither a higher severity nor a
// first page.
func newsOnly(t *Tracked) bool {
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
func (p *Pipeline) criticalSentLately(b *Book, group string, now time.Time) bool {
	for _, t := range b.Alerts {
		if t.Group == group && t.LastSent != nil && t.SentSeverity == alert.Critical && now.Sub(*t.LastSent) < p.cfg.GroupWait {
			return true
		}
	}
	return false
}

// DueNow reports whether a group of b is ready to be flushed at now.
func DueNow(b *Book, now time.Time) bool {
	for _, g := range b.Groups {
		if !g.FlushAt.After(now) {
			return true
		}
	}
	return false
}
