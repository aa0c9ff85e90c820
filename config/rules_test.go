package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestRulesDefaultsValid(t *testing.T) {
	var errs Errors
	r := DefaultRules()
	r.validate("rules", &errs, testCatalog)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, ok := r.Sections["pigeons"].(pigeonSettings); !ok {
		t.Errorf("the section's default is not in Sections: %#v", r.Sections)
	}
}

func TestRulesParse(t *testing.T) {
	l, err := Parse(strings.NewReader(`
rules:
  for: {PoolCapacity: 15m}
  pigeons:
    max_delay: 2h
    lofts: [north, south]
    wing: {span: 9}
`), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Config.Rules
	got, ok := r.Sections["pigeons"].(pigeonSettings)
	if r.For["PoolCapacity"].D() != 15*time.Minute || !ok || got.MaxDelay.D() != 2*time.Hour || strings.Join(got.Lofts, ",") != "north,south" || got.Wing.Span != 9 {
		t.Errorf("%+v", r)
	}
	if got.Count != 3 || got.Wing.Feathers != 12 || r.RepeatWarning.D() != 24*time.Hour {
		t.Errorf("defaults lost: %+v", got)
	}
}

// Every bad value is refused with its key path: the shared keys by config,
// a section's keys by the section, which names only its own keys.
func TestRulesValidationNamesPath(t *testing.T) {
	cases := []struct{ yaml, path string }{
		{"rules: {for: {PoolCapacty: 5m}}", "rules.for.PoolCapacty"},
		{"rules: {disabled: [Nope]}", "rules.disabled[0]"},
		{"rules: {group_by: [host]}", "rules.group_by[0]"},
		{"rules: {group_wait: 1h}", "rules.group_wait"},
		{"rules: {repeat_warning: soon}", "rules.repeat_warning"},
		{"rules: {pigeons: {count: 0}}", `rules.pigeons.count = "0": must be at least 1`},
		{"rules: {pigeons: {max_delay: soon}}", `rules.pigeons.max_delay = "soon": "soon" is not a duration`},
		{"rules: {pigeons: {count: many}}", `rules.pigeons.count = "many": must be a whole number`},
		{"rules: {pigeons: {wing: {span: 0}}}", `rules.pigeons.wing.span = "0": must be 1 to 30`},
		{"rules: {pigeons: [1]}", "rules.pigeons: must be a mapping (key: value lines), not a list (- item lines); valid keys here: count, lofts, max_delay, wing"},
		{"rules: {pigeons: {cout: 2}}", `rules.pigeons.cout: unknown key (line 1): did you mean "count"?; valid keys here: count, lofts, max_delay, wing`},
		{"rules: {pigeon: {count: 2}}", `rules.pigeon: unknown key (line 1): did you mean "pigeons"?; valid keys here: disabled, doves, for, group_by, group_interval, group_wait, pigeons, repeat_critical, repeat_warning`},
		{"rules: 5", `rules = "5": must be a mapping (key: value lines), not a single value; valid keys here: disabled, doves, for, group_by`},
		{"rules:\n  pigeons: {count: 2}\n  pigeons: {count: 3}\n", "rules.pigeons: given twice (lines 2 and 3): keep one"},
		{"rules: {group_by: host}", "rules.group_by = \"host\": must be a list"},
	}
	for _, tc := range cases {
		_, err := Parse(strings.NewReader(tc.yaml), testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: error %v does not name %s", tc.yaml, err, tc.path)
		}
	}
}

// The problems of rules: take their place among the rest of the file's,
// in document order.
func TestRulesProblemsInFileOrder(t *testing.T) {
	_, err := Parse(strings.NewReader("hots: x\nrules:\n  pigeon: {}\n  group_wat: 1s\n  pigeons: {cout: 1}\nnotify:\n  consol: true\n"), testCatalog)
	var got []string
	if es, ok := err.(Errors); ok {
		for _, e := range es {
			got = append(got, e.Path)
		}
	}
	if want := "hots rules.pigeon rules.group_wat rules.pigeons.cout notify.consol"; strings.Join(got, " ") != want {
		t.Errorf("problems %v, want %s (%v)", got, want, err)
	}
}

// check-config prints the shared keys, then every section in the
// catalogue's order, and what it prints reads back the same.
func TestRulesMasked(t *testing.T) {
	l, err := Parse(strings.NewReader("rules:\n  pigeons: {count: 5}\n  repeat_warning: 2d\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	want := "  disabled: []\n  pigeons:\n    count: 5\n    max_delay: 1h\n    lofts: []\n    wing:\n      span: 4\n      feathers: 12\n  doves:\n    coo: false\n"
	if !strings.Contains(string(out), "  repeat_warning: 2d\n") || !strings.Contains(string(out), want) {
		t.Errorf("rules printed as\n%s\nwant\n%s", out, want)
	}
	again, err := Parse(strings.NewReader(string(out)), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again.Config.Rules.Sections) != fmt.Sprint(l.Config.Rules.Sections) {
		t.Errorf("read back as %v, want %v", again.Config.Rules.Sections, l.Config.Rules.Sections)
	}
}

// The example's rules: section is written from the keys' tags and defaults.
func TestRulesExample(t *testing.T) {
	got, err := RulesExample(testCatalog.RuleSections)
	if err != nil {
		t.Fatal(err)
	}
	want := `rules:
  group_wait: 10s        # alerts starting together (an enclosure losing six disks) become one notification
  group_interval: 5m     # a firing alert whose count grew is sent again at most this often (a higher severity goes at once)
  repeat_critical: 4h    # a still-firing critical alert is sent again after this
  repeat_warning: 1d     # a still-firing warning is sent again after this
  group_by: [pool]       # labels that split notifications (host is always one)
  for: {}                # per-alert hold before firing, e.g. {ScrubOverdue: 1h}
  disabled: []           # alert names to turn off (zwatch rules eval prints the names)
  pigeons:
    # How many birds carry one message;
    # more are slower but surer.
    count: 3             # birds per message
    max_delay: 1h
    lofts: []            # e.g. [north]
    wing: {span: 4, feathers: 12}  # a long line's comment moves right
  doves:
    coo: false
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	l, err := Parse(strings.NewReader(got), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(l.Config.Rules.Sections["pigeons"]) != fmt.Sprint(pigeonSection.Default()) {
		t.Errorf("the example reads as %v, not the defaults", l.Config.Rules.Sections["pigeons"])
	}
}

// pigeonSettings is a rule's section written against RuleSection directly,
// as config sees every section the catalogue hands it.
type pigeonSettings struct {
	Count    int      `yaml:"count" doc:"birds per message" note:"How many birds carry one message;\nmore are slower but surer."`
	MaxDelay Duration `yaml:"max_delay"`
	Lofts    []string `yaml:"lofts" doc:"e.g. [north]"`
	Wing     wing     `yaml:"wing" doc:"a long line's comment moves right"`
}

type wing struct {
	Span     int `yaml:"span"`
	Feathers int `yaml:"feathers"`
}

type doveSettings struct {
	Coo bool `yaml:"coo"`
}

type testSection[S any] struct {
	key      string
	defaults S
	validate func(s S, path string, errs *Errors)
}

func (s testSection[S]) Key() string  { return s.key }
func (s testSection[S]) Default() any { return s.defaults }

func (s testSection[S]) Decode(n *yaml.Node, path string, errs *Errors) (any, bool) {
	v := s.defaults
	if !DecodeRuleSection(n, path, &v, errs) {
		return nil, false
	}
	return v, true
}

func (s testSection[S]) Validate(v any, path string, errs *Errors) {
	if s.validate != nil {
		s.validate(v.(S), path, errs)
	}
}

var pigeonSection = testSection[pigeonSettings]{key: "pigeons",
	defaults: pigeonSettings{Count: 3, MaxDelay: Duration(time.Hour), Wing: wing{Span: 4, Feathers: 12}},
	validate: func(s pigeonSettings, p string, errs *Errors) {
		if s.Count < 1 {
			errs.Add(p+".count", s.Count, "must be at least 1")
		}
		if s.Wing.Span < 1 || s.Wing.Span > 30 {
			errs.Add(p+".wing.span", s.Wing.Span, "must be 1 to 30")
		}
	}}

// testCatalog stands in for catalog.Config(), which this package's own tests
// cannot import: a few real rule names and two sections of made-up rules.
var testCatalog = Catalog{Rules: []string{"PoolState", "PoolCapacity", "SmartTemperature"},
	RuleSections: []RuleSection{pigeonSection, testSection[doveSettings]{key: "doves"}}}
