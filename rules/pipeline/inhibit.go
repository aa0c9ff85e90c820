package pipeline

import (
	"slices"
	"strings"

	"github.com/zwatch/zwatch/model/alert"
)

// Stage 3, inhibit: while a source alert fires, the alerts it carries are
// marked inhibited and not sent.

// InhibitRule is an inhibition in the manner of Alertmanager's
// inhibit_rules: while an alert matching Source fires, the alerts matching
// Target that share the values of Equal with it (and, with SameDisk, its
// disk) are not sent; the source alert already tells their story. Target
// alerts are inhibited whatever their state, so a resolved part of a dead
// pool does not send its notice either.
type InhibitRule struct {
	Source Matcher
	Target Matcher
	// Equal names labels whose values source and target share; a missing
	// label is "", as in Alertmanager.
	Equal []string
	// SameDisk: source and target are about the same physical disk. ZFS and
	// SMART alerts name a disk differently (vdev path, device), so this is
	// the serial the engine joined them by; an alert about no known disk
	// matches nothing.
	SameDisk bool
}

// Matcher selects alerts by name and labels; every part that is set must hold.
type Matcher struct {
	Names    []string // the alert's name is one of these
	NotNames []string // the alert's name is none of these
	Labels   []LabelMatch
}

// LabelMatch holds when label Name has one of Values.
type LabelMatch struct {
	Name   string
	Values []string
}

func (m *Matcher) matches(a *alert.Alert) bool {
	if len(m.Names) > 0 && !slices.Contains(m.Names, a.Name) {
		return false
	}
	if slices.Contains(m.NotNames, a.Name) {
		return false
	}
	for _, l := range m.Labels {
		if !slices.Contains(l.Values, a.Labels[l.Name]) {
			return false
		}
	}
	return true
}

// key is what a source and a target of r must share; false when t cannot
// take part (SameDisk and its disk is unknown).
func (r *InhibitRule) key(t *Tracked) (string, bool) {
	if r.SameDisk && t.Serial == "" {
		return "", false
	}
	switch {
	case len(r.Equal) == 0 && r.SameDisk:
		return t.Serial, true
	case len(r.Equal) == 1 && !r.SameDisk:
		return t.A.Labels[r.Equal[0]], true
	}
	var b strings.Builder
	for _, l := range r.Equal {
		b.WriteString(t.A.Labels[l])
		b.WriteByte(0)
	}
	if r.SameDisk {
		b.WriteString(t.Serial)
	}
	return b.String(), true
}

// inhibit marks the alerts a firing source alert carries, and reports
// whether a mark changed.
func (p *Pipeline) inhibit(b *Book) (changed bool) {
	rules := p.cfg.Inhibit
	// sources[i] holds the keys of rule i's firing sources; nil when it has
	// none, the usual case, so targets need not be looked at.
	var small [4]map[string]bool
	sources := small[:0]
	if n := len(rules); n > len(small) {
		sources = make([]map[string]bool, 0, n)
	}
	sources = sources[:len(rules)]
	found := false
	for _, t := range b.Alerts {
		if t.A.State != alert.Firing {
			continue
		}
		for i := range rules {
			r := &rules[i]
			if !r.Source.matches(&t.A) {
				continue
			}
			if k, ok := r.key(t); ok {
				if sources[i] == nil {
					sources[i] = map[string]bool{}
				}
				sources[i][k] = true
				found = true
			}
		}
	}
	for _, t := range b.Alerts {
		inh := false
		for i := 0; found && i < len(sources) && !inh; i++ {
			if sources[i] == nil {
				continue
			}
			r := &rules[i]
			if r.Target.matches(&t.A) {
				k, ok := r.key(t)
				inh = ok && sources[i][k]
			}
		}
		if inh != t.Inhibited {
			t.Inhibited = inh
			changed = true
		}
	}
	return changed
}

// Inhibit runs the inhibit stage alone over b (Settle runs it with the
// others) and reports whether a mark changed.
func (p *Pipeline) Inhibit(b *Book) bool { return p.inhibit(b) }
