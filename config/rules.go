package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/internal/yamlcheck"
)

// RulesConfig is the rules: section: the alert lifecycle every rule shares,
// and the sections the rules own (rules.kernel, rules.capacity, ...). Every
// key and its default is described in docs/rules.md.
//
// Only what no one rule owns is a field here. A rule's thresholds belong to
// the rule file that reads them, which defines its section
// (rules.defineConfig) and hands it to config through the catalogue
// (Catalog.RuleSections). A section that several rules read is owned by one
// of them; code outside the engine that needs a threshold (the status
// page's watcher.silent_after) asks the rules package for it
// (rules.SilentAfter), so that the key has one owner and one reading.
// Adding a rule with a threshold thus changes nothing here.
type RulesConfig struct {
	// GroupWait gathers alerts that start together (an enclosure losing six
	// disks) into one notification.
	GroupWait Duration `yaml:"group_wait" doc:"alerts starting together (an enclosure losing six disks) become one notification"`
	// GroupInterval is the least time between two notifications of one
	// alert when only its count grew or a new event of its kind came (as
	// Alertmanager's group_interval): the later count goes in one follow-up.
	GroupInterval Duration `yaml:"group_interval" doc:"a firing alert whose count grew is sent again at most this often (a higher severity goes at once)"`
	// RepeatCritical and RepeatWarning: how often a still-firing alert is sent again.
	RepeatCritical Duration `yaml:"repeat_critical" doc:"a still-firing critical alert is sent again after this"`
	RepeatWarning  Duration `yaml:"repeat_warning" doc:"a still-firing warning is sent again after this"`
	// MarkTest marks every notification as a test (zwatch simulate); not
	// settable from the file.
	MarkTest bool `yaml:"-"`
	// Escalate are notify.escalation's delays (NotifyConfig.EscalationAfters):
	// the engine's part of escalation; set by whoever runs the engine, not
	// from the rules: section.
	Escalate []time.Duration `yaml:"-"`
	// GroupBy names the labels, besides host (always), that split
	// notifications into groups. Default: [pool].
	GroupBy []string `yaml:"group_by" doc:"labels that split notifications (host is always one)"`
	// For overrides a rule's pending duration, by alert name (PoolCapacity: 15m).
	For map[string]Duration `yaml:"for" doc:"per-alert hold before firing, e.g. {ScrubOverdue: 1h}"`
	// Disabled lists alert names that are never raised.
	Disabled []string `yaml:"disabled" doc:"alert names to turn off (zwatch rules eval prints the names)"`

	// Sections are the rules' own sections by key (kernel, capacity, ...),
	// each the value its RuleSection decoded and validated. After Parse
	// every section of the catalogue is here, its default where the file
	// sets none of it; a RulesConfig built in code (DefaultRules) has none,
	// and a rule then reads its section's default.
	Sections map[string]any `yaml:"-"`

	// node is the rules: mapping as written, kept until the catalogue says
	// which section decodes which key (validate).
	node *yaml.Node
	// order is the catalogue's order of the sections, in which check-config
	// prints them.
	order []string
}

// RuleSection is one section under rules: (rules.kernel), as the rule file
// that owns it defines it. Config knows the keys every rule shares
// (RulesConfig); the section owns its keys, their defaults, their decoding
// and what values make sense — as a ChannelType owns a channel's keys.
type RuleSection interface {
	// Key is the section's key under rules:.
	Key() string
	// Default is the section's value when the file sets none of it: a
	// struct whose yaml tags are its keys and whose doc and note tags
	// document them (RulesExample).
	Default() any
	// Decode decodes n, the section as written, over the defaults. Every
	// value of the wrong kind or type goes to errs under path
	// (rules.kernel); ok is false when n does not decode.
	Decode(n *yaml.Node, path string, errs *Errors) (value any, ok bool)
	// Validate reports the impossible values of value (what Decode or
	// Default returned) under path.
	Validate(value any, path string, errs *Errors)
}

// DefaultRules are the shared keys' values when the file sets none; each
// section's default is its RuleSection's.
func DefaultRules() RulesConfig {
	return RulesConfig{
		GroupWait:      Duration(10 * time.Second),
		GroupInterval:  Duration(5 * time.Minute),
		RepeatCritical: Duration(4 * time.Hour),
		RepeatWarning:  Duration(24 * time.Hour),
		GroupBy:        []string{"pool"},
	}
}

var (
	typeOfSharedRules = reflect.TypeFor[sharedRules]()
	typeOfStringMap   = reflect.TypeFor[map[string]any]()
)

// ruleKeys are the keys of RulesConfig's own fields, the keys every
// rules: section has besides the catalogue's sections.
var ruleKeys = func() []string {
	var keys []string
	for k := range yamlcheck.Fields(typeOfSharedRules) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}()

// sharedRules is RulesConfig without its YAML methods, to decode and print
// the shared keys the way any struct is.
type sharedRules RulesConfig

// UnmarshalYAML takes the shared keys and keeps the mapping for the
// sections. It never fails: checkRules, which knows the catalogue, reports
// every problem with its key path before the file is decoded, and yamlcheck,
// which runs before that, decodes the section through here.
func (r *RulesConfig) UnmarshalYAML(n *yaml.Node) error {
	m := resolve(n)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	shared := mappingLike(m)
	for k, v := range firstKeys(m) {
		if slices.Contains(ruleKeys, k.Value) {
			shared.Content = append(shared.Content, k, v)
		}
	}
	_ = shared.Decode((*sharedRules)(r))
	r.node = m
	return nil
}

// MarshalYAML writes the shared keys followed by the sections, in the
// catalogue's order, as one mapping the way the file has them.
func (r RulesConfig) MarshalYAML() (any, error) {
	var out yaml.Node
	if err := out.Encode((*sharedRules)(&r)); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	for _, key := range r.sectionKeys() {
		var k, v yaml.Node
		k.SetString(key)
		if err := v.Encode(r.Sections[key]); err != nil {
			return nil, fmt.Errorf("rules.%s: %w", key, err)
		}
		out.Content = append(out.Content, &k, &v)
	}
	return &out, nil
}

// sectionKeys are the keys of Sections: the catalogue's order, then any
// set in code, sorted.
func (r *RulesConfig) sectionKeys() []string {
	keys := slices.Clone(r.order)
	rest := slices.Sorted(maps.Keys(r.Sections))
	for _, k := range rest {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func (r *RulesConfig) validate(p string, errs *Errors, cat Catalog) {
	knownRules := cat.Rules
	if r.GroupWait.D() < 0 || r.GroupWait.D() > 10*time.Minute {
		errs.add(p+".group_wait", FormatDuration(r.GroupWait.D()), "must be between 0s and 10m")
	}
	if r.GroupInterval.D() < 0 || r.GroupInterval.D() > time.Hour {
		errs.add(p+".group_interval", FormatDuration(r.GroupInterval.D()), "must be between 0s and 1h")
	}
	positive(errs, p+".repeat_critical", r.RepeatCritical, time.Minute)
	positive(errs, p+".repeat_warning", r.RepeatWarning, time.Minute)
	for i, l := range r.GroupBy {
		if strings.TrimSpace(l) == "" || l == "host" {
			errs.add(fmt.Sprintf("%s.group_by[%d]", p, i), l, "want a label name such as pool (host is always grouped by)")
		}
	}
	known := map[string]bool{}
	for _, n := range knownRules {
		known[n] = true
	}
	names := make([]string, 0, len(r.For))
	for n := range r.For {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !known[n] {
			errs.add(p+".for."+n, nil, "unknown alert name%s; known: %s", yamlcheck.Suggest(n, knownRules), strings.Join(knownRules, ", "))
		} else if d := r.For[n].D(); d < 0 || d > 7*24*time.Hour {
			errs.add(p+".for."+n, FormatDuration(d), "must be between 0s and 7d")
		}
	}
	for i, n := range r.Disabled {
		if !known[n] {
			errs.add(fmt.Sprintf("%s.disabled[%d]", p, i), n, "unknown alert name%s; known: %s", yamlcheck.Suggest(n, knownRules), strings.Join(knownRules, ", "))
		}
	}
	r.decodeSections(p, errs, cat)
}

// decodeSections has each section of the catalogue decode its part of the
// file, or take its default, and validate it.
func (r *RulesConfig) decodeSections(p string, errs *Errors, cat Catalog) {
	written := map[string]*yaml.Node{}
	if r.node != nil {
		for k, v := range firstKeys(r.node) {
			written[k.Value] = v
		}
	}
	r.Sections = make(map[string]any, len(cat.RuleSections))
	r.order = make([]string, 0, len(cat.RuleSections))
	for _, s := range cat.RuleSections {
		key, sp := s.Key(), p+"."+s.Key()
		value := s.Default()
		if n := written[key]; isSet(n) {
			v, ok := s.Decode(n, sp, errs)
			if !ok {
				continue
			}
			value = v
		}
		s.Validate(value, sp, errs)
		r.Sections[key] = value
		r.order = append(r.order, key)
	}
}

// checkRules does for the rules: section what yamlcheck does for the rest
// of the file, at the same stage and in document order among its problems:
// a key neither shared nor a section of the catalogue (with a did-you-mean
// over all of them), a repeated key, and a value that does not fit its key.
func checkRules(root *yaml.Node, cat Catalog, errs *Errors) {
	m := lookup(root, "rules")
	if m == nil || m.Kind == yaml.ScalarNode && m.Tag == "!!null" {
		return
	}
	all := cat.allRuleKeys()
	var found Errors
	if m.Kind != yaml.MappingNode {
		for _, pr := range yamlcheck.Check(m, typeOfStringMap, yamlcheck.Options{}) {
			pr.Keys = all
			pr.Message += "; valid keys here: " + strings.Join(all, ", ")
			found.addProblem(under("rules", pr))
		}
		*errs = mergeByLine(*errs, found)
		return
	}
	first := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		p := "rules." + k.Value
		if line, dup := first[k.Value]; dup {
			found.addProblem(yamlcheck.Problem{Kind: yamlcheck.DuplicateKey, Path: p, Line: k.Line, Key: k.Value,
				Message: fmt.Sprintf("given twice (lines %d and %d): keep one", line, k.Line)})
			continue
		}
		first[k.Value] = k.Line
		if slices.Contains(ruleKeys, k.Value) {
			one := mappingLike(m)
			one.Content = []*yaml.Node{k, v}
			for _, pr := range yamlcheck.Check(one, typeOfSharedRules, yamlcheck.Options{}) {
				found.addProblem(under("rules", pr))
			}
			continue
		}
		s, ok := cat.RuleSection(k.Value)
		if !ok {
			found.addProblem(yamlcheck.UnknownKeyAt(p, k, all))
			continue
		}
		from := len(found)
		s.Decode(v, p, &found)
		found.placeAt(from, k.Line)
	}
	*errs = mergeByLine(*errs, found)
}

// DecodeRuleSection checks n against the struct dst points to, the way the
// rest of the file is checked, and decodes it over dst's values (the
// section's defaults). It reports false, with the problems in errs under
// path, when n does not fit.
func DecodeRuleSection(n *yaml.Node, path string, dst any, errs *Errors) bool {
	return DecodeChannelSettings(n, path, dst, errs)
}

// RuleSection is the catalogue's section with key.
func (c Catalog) RuleSection(key string) (RuleSection, bool) {
	for _, s := range c.RuleSections {
		if s.Key() == key {
			return s, true
		}
	}
	return nil, false
}

// allRuleKeys is every key rules: may have, sorted: the shared keys and
// the catalogue's sections.
func (c Catalog) allRuleKeys() []string {
	all := slices.Clone(ruleKeys)
	for _, s := range c.RuleSections {
		all = append(all, s.Key())
	}
	sort.Strings(all)
	return slices.Compact(all)
}

// CheckMinDuration reports d at path when it is shorter than min, in the
// words every duration of the file is refused with.
func CheckMinDuration(errs *Errors, path string, d Duration, min time.Duration) {
	positive(errs, path, d, min)
}
