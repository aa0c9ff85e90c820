package config

import (
	"strings"
	"testing"
	"time"
)

func TestRulesDefaultsValid(t *testing.T) {
	var errs Errors
	r := DefaultRules()
	r.validate("rules", &errs, testCatalog.Rules)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
}

func TestRulesParse(t *testing.T) {
	l, err := Parse(strings.NewReader(`
rules:
  scrub: {max_age: 40d}
  for: {PoolCapacity: 15m}
  smart:
    overrides:
      - {serial: WD-123, attribute: 188, ignore: true}
      - {model: "ST4000DM004*", attribute: 5, warning: 10, critical: 100}
`), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Config.Rules
	if r.Scrub.MaxAge.D() != 40*24*time.Hour || r.For["PoolCapacity"].D() != 15*time.Minute || len(r.Smart.Overrides) != 2 || *r.Smart.Overrides[1].Critical != 100 {
		t.Errorf("%+v", r)
	}
	if r.Capacity.Warning != 80 || r.Smart.HDDTempCritical != 60 {
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
	}
	for _, tc := range cases {
		_, err := Parse(strings.NewReader(tc.yaml), testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: error %v does not name %s", tc.yaml, err, tc.path)
		}
	}
}

// testCatalog stands in for catalog.Config(), which this package's own tests
// cannot import: a few real rule names.
var testCatalog = Catalog{Rules: []string{"PoolState", "PoolCapacity", "SmartTemperature"}}
