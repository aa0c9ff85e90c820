package rules

import (
	"slices"
)

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
