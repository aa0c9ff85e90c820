package rules

import (
	"slices"
	"strings"

	"github.com/zwatch/zwatch/model/alert"
)

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
func (r *InhibitRule) key(t *tracked) (string, bool) {
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

// inhibitRules collects a catalogue's inhibitions, each declared by its
// source (AlertInfo.Inhibits) or by a target (AlertInfo.InhibitedBy). The
// same inhibition named by several targets becomes one rule over all of
// them, so inhibit looks for its sources once.
func inhibitRules(catalogue []Rule) []InhibitRule {
	var out []InhibitRule
	for _, a := range Alerts(catalogue) {
		for _, r := range a.Inhibits {
			r.Source.Names = []string{a.Name}
			out = append(out, r)
		}
		for _, r := range a.InhibitedBy {
			if i := slices.IndexFunc(out, func(o InhibitRule) bool { return sameSource(&o, &r) && onlyNames(&o.Target) }); i >= 0 {
				out[i].Target.Names = append(slices.Clip(out[i].Target.Names), a.Name)
				continue
			}
			r.Target = Matcher{Names: []string{a.Name}}
			out = append(out, r)
		}
	}
	return out
}

func sameSource(a, b *InhibitRule) bool {
	return a.SameDisk == b.SameDisk && slices.Equal(a.Equal, b.Equal) &&
		slices.Equal(a.Source.Names, b.Source.Names) && slices.Equal(a.Source.NotNames, b.Source.NotNames) &&
		slices.EqualFunc(a.Source.Labels, b.Source.Labels, func(x, y LabelMatch) bool {
			return x.Name == y.Name && slices.Equal(x.Values, y.Values)
		})
}

func onlyNames(m *Matcher) bool { return len(m.NotNames) == 0 && len(m.Labels) == 0 }

// inhibit marks the alerts a firing source alert carries (e.inhibit).
func (e *Engine) inhibit(h *hostState) {
	// sources[i] holds the keys of rule i's firing sources; nil when it has
	// none, the usual case, so targets need not be looked at.
	var small [4]map[string]bool
	sources := small[:0]
	if n := len(e.rules.inhibit); n > len(small) {
		sources = make([]map[string]bool, 0, n)
	}
	sources = sources[:len(e.rules.inhibit)]
	found := false
	for _, t := range h.Alerts {
		if t.A.State != alert.Firing {
			continue
		}
		for i := range e.rules.inhibit {
			r := &e.rules.inhibit[i]
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
	for _, t := range h.Alerts {
		inh := false
		for i := 0; found && i < len(sources) && !inh; i++ {
			if sources[i] == nil {
				continue
			}
			r := &e.rules.inhibit[i]
			if r.Target.matches(&t.A) {
				k, ok := r.key(t)
				inh = ok && sources[i][k]
			}
		}
		if inh != t.Inhibited {
			t.Inhibited = inh
			h.dirty = true
		}
	}
}
