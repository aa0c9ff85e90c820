package rules

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
)

// configCatalog is what catalog.Config() hands config, for this package's
// tests (which cannot import catalog).
func configCatalog(catalogue []Rule) config.Catalog {
	return config.Catalog{Rules: AlertNames(catalogue), RuleSections: ConfigSections(catalogue)}
}

const exampleConfig = "../configs/zwatch.example.yaml"

// rulesSection finds the rules: section of the example config: from its
// key to the first line that is not indented under it.
func rulesSection(example []byte) (before, section, after []byte, ok bool) {
	start := bytes.Index(example, []byte("\nrules:\n"))
	if start < 0 {
		return nil, nil, nil, false
	}
	start++
	end := start + len("rules:\n")
	for end < len(example) && example[end] == ' ' {
		nl := bytes.IndexByte(example[end:], '\n')
		if nl < 0 {
			end = len(example)
			break
		}
		end += nl + 1
	}
	return example[:start], example[start:end], example[end:], true
}

// The rules: section of configs/zwatch.example.yaml (and so zwatch.yaml(5))
// is written from the shared keys and the catalogue's sections: their
// keys, defaults and doc and note tags. The test only reads the file
// unless -update is set.
func TestExampleConfigRulesSection(t *testing.T) {
	want, err := config.RulesExample(ConfigSections(Catalogue()))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	before, got, after, ok := rulesSection(example)
	if !ok {
		t.Fatalf("%s has no rules: section", exampleConfig)
	}
	if string(got) == want {
		return
	}
	if *update {
		if err := os.WriteFile(exampleConfig, slices.Concat(before, []byte(want), after), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the rules: section of %s", exampleConfig)
		return
	}
	gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	for i := range max(len(gotLines), len(wantLines)) {
		if g, w := lineAt(gotLines, i), lineAt(wantLines, i); g != w {
			t.Errorf("%s: line %d of the rules: section differs from the code (go test ./rules -run TestExampleConfigRulesSection -update):\n got: %s\nwant: %s", exampleConfig, i+1, g, w)
			break
		}
	}
}

// The written section reads back as the defaults.
func TestRulesExampleIsTheDefaults(t *testing.T) {
	section, err := config.RulesExample(ConfigSections(Catalogue()))
	if err != nil {
		t.Fatal(err)
	}
	l, err := config.Parse(strings.NewReader(section), configCatalog(Catalogue()))
	if err != nil {
		t.Fatal(err)
	}
	r, def := l.Config.Rules, config.DefaultRules()
	if r.GroupWait != def.GroupWait || r.GroupInterval != def.GroupInterval || r.RepeatCritical != def.RepeatCritical ||
		r.RepeatWarning != def.RepeatWarning || !slices.Equal(r.GroupBy, def.GroupBy) || len(r.For) != 0 || len(r.Disabled) != 0 {
		t.Errorf("shared keys read as %+v, not the defaults %+v", r, def)
	}
	for _, s := range ConfigSections(Catalogue()) {
		// An empty list reads as one, the default is nil: alike as YAML.
		if got := r.Sections[s.Key()]; fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", s.Default()) || reflect.TypeOf(got) != reflect.TypeOf(s.Default()) {
			t.Errorf("rules.%s reads as %+v, not its default %+v", s.Key(), got, s.Default())
		}
	}
}

// Each section once, in the order zwatch.yaml has always had; every key
// of it is one a rule reads.
func TestConfigSections(t *testing.T) {
	var keys []string
	for _, s := range ConfigSections(Catalogue()) {
		keys = append(keys, s.Key())
	}
	if want := zwatchYAMLOrder[:]; !slices.Equal(keys, want) {
		t.Errorf("sections %v, want %v", keys, want)
	}
	withNew := append(Catalogue(), Rule{Config: []config.RuleSection{defineConfig("zz_new", testSettings{})}})
	if s := ConfigSections(withNew); s[len(s)-1].Key() != "zz_new" {
		t.Errorf("a new section does not follow the others: %v", s)
	}
}

type testSettings struct{}

func (testSettings) validate(string, *config.Errors) {}

func TestRuleSectionDefaultsValid(t *testing.T) {
	for _, s := range ConfigSections(Catalogue()) {
		var errs config.Errors
		s.Validate(s.Default(), "rules."+s.Key(), &errs)
		if len(errs) > 0 {
			t.Errorf("rules.%s: %v", s.Key(), errs)
		}
	}
}

func TestRulesParse(t *testing.T) {
	l, err := config.Parse(strings.NewReader(`
rules:
  scrub: {max_age: 40d}
  for: {PoolCapacity: 15m}
  smart:
    overrides:
      - {serial: WD-123, attribute: 188, ignore: true}
      - {model: "ST4000DM004*", attribute: 5, warning: 10, critical: 100}
`), configCatalog(Catalogue()))
	if err != nil {
		t.Fatal(err)
	}
	r := &l.Config.Rules
	s := smartConfig.of(r)
	if scrubConfig.of(r).MaxAge.D() != 40*24*time.Hour || r.For["PoolCapacity"].D() != 15*time.Minute || len(s.Overrides) != 2 || *s.Overrides[1].Critical != 100 {
		t.Errorf("%+v", r)
	}
	if capacityConfig.of(r).Warning != 80 || s.HDDTempCritical != 60 || scrubConfig.of(r).PausedMax.D() != 8*time.Hour {
		t.Error("defaults lost")
	}
}

// Every bad value is refused with its key path.
func TestRulesValidationNamesPath(t *testing.T) {
	cases := []struct{ yaml, path string }{
		{"rules: {capacity: {warning: 95}}", "rules.capacity.warning"},
		{"rules: {capacity: {critical: 120}}", "rules.capacity.critical"},
		{"rules: {for: {PoolCapacty: 5m}}", "rules.for.PoolCapacty"},
		{"rules: {disabled: [Nope]}", "rules.disabled[0]"},
		{"rules: {scrub: {max_age: 10m}}", "rules.scrub.max_age"},
		{"rules: {errors: {rate_count: 0}}", "rules.errors.rate_count"},
		{"rules: {smart: {hdd_temp_critical: 50}}", "rules.smart.hdd_temp_critical"},
		{"rules: {smart: {overrides: [{serial: A, model: B, attribute: 5, ignore: true}]}}", "rules.smart.overrides[0]"},
		{"rules: {smart: {overrides: [{serial: A, attribute: 9, ignore: true}]}}", "rules.smart.overrides[0].attribute"},
		{"rules: {smart: {overrides: [{serial: A, attribute: 5}]}}", "rules.smart.overrides[0]"},
		{"rules: {arc: {min_hit_ratio: 1.5}}", "rules.arc.min_hit_ratio"},
		{"rules: {watcher: {stale_intervals: 1}}", "rules.watcher.stale_intervals"},
		{"rules: {group_by: [host]}", "rules.group_by[0]"},
		{"rules: {capacity: {forecast_critical: 30d}}", "rules.capacity.forecast_critical"},
		{"rules: {scrub: {max_age: soon}}", "rules.scrub.max_age"},
		{"rules: {kernel: {bursts: 1}}", `rules.kernel.bursts = "1": must be at least 2 (the first burst is the warning; this many within kernel.window are critical)`},
		{"rules: {kernel: {burst_gap: 2h}}", `rules.kernel.burst_gap = "2h": must be shorter than kernel.window (1h)`},
		{"rules: {kernal: {bursts: 3}}", `rules.kernal: unknown key (line 1): did you mean "kernel"?; valid keys here: arc, capacity, datasets, disabled, disks, errors, for, group_by, group_interval, group_wait, kernel, pools, redundancy, repeat_critical, repeat_warning, replication, scrub, slow_io, smart, snapshots, watcher`},
		{"rules: {kernel: {burst: 3}}", `rules.kernel.burst: unknown key (line 1): did you mean "bursts"?; valid keys here: burst_gap, bursts, clear, window`},
		{"rules: {smart: {reallocated: 5}}", `rules.smart.reallocated = "5": must be a mapping (key: value lines), not a single value; valid keys here: critical, warning`},
		{"rules: {snapshots: {max_age: [{dataset: /x, max_age: 10s}]}}", `rules.snapshots.max_age[0].dataset = "/x": want a dataset glob such as tank/photos or backup/* (* does not cross /)`},
		{"rules: {disks: {ignore: [\"[\"]}}", `rules.disks.ignore[0] = "[": want a serial or by-id glob such as WD-WX32* or usb-Seagate_*`},
		{"rules: {slow_io: {rises: 0}}", `rules.slow_io.rises = "0": must be at least 1`},
		{"rules: {redundancy: {critical_margin: 5}}", `rules.redundancy.critical_margin = "5": must be 0, 1 or 2`},
		{"rules: {smart: {nvme_spare_warning: 101}}", `rules.smart.nvme_spare_warning = "101": must be 0 to 100 (%)`},
	}
	for _, tc := range cases {
		_, err := config.Parse(strings.NewReader(tc.yaml), configCatalog(Catalogue()))
		if err == nil || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: error %v does not name %s", tc.yaml, err, tc.path)
		}
	}
}

// A rule reads its section with a map lookup and a copy, at every
// evaluation: that must not allocate, with the file's section or the
// default.
func TestSectionLookupDoesNotAllocate(t *testing.T) {
	l, err := config.Parse(strings.NewReader("rules: {smart: {crc_warning: 2}}"), configCatalog(Catalogue()))
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []*config.RulesConfig{&l.Config.Rules, new(config.DefaultRules())} {
		var sum uint64
		if n := testing.AllocsPerRun(100, func() {
			sum += smartConfig.of(cfg).CRCWarning + uint64(kernelConfig.of(cfg).Bursts)
		}); n != 0 {
			t.Errorf("%v allocations per lookup", n)
		}
	}
	if got := smartConfig.of(&l.Config.Rules).CRCWarning; got != 2 {
		t.Errorf("crc_warning read as %d", got)
	}
}

// edit changes one copy of a config only.
func TestSectionEditLeavesCopies(t *testing.T) {
	a := config.DefaultRules()
	kernelConfig.edit(&a, func(k *kernelSettings) { k.Bursts = 5 })
	b := a
	kernelConfig.edit(&b, func(k *kernelSettings) { k.Bursts = 7 })
	if kernelConfig.of(&a).Bursts != 5 || kernelConfig.of(&b).Bursts != 7 {
		t.Errorf("a %d, b %d", kernelConfig.of(&a).Bursts, kernelConfig.of(&b).Bursts)
	}
}
