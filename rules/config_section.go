package rules

import (
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/config"
)

// configSection is one section under rules: (rules.kernel) as the rule file
// that owns it defines it: S is a struct whose yaml tags are the section's
// keys, whose doc and note tags document them in the example config
// (config.RulesExample), and whose validate method refuses what makes no
// sense. It is the config.RuleSection the catalogue hands to config; rules
// read it through of.
type configSection[S sectionSettings] struct {
	key      string
	defaults S
}

// sectionSettings are the settings of one section.
type sectionSettings interface {
	// validate reports impossible values under path (rules.kernel), each
	// with its key path, value and fix (config.Errors.Add).
	validate(path string, errs *config.Errors)
}

// defineConfig defines the section key with its defaults. A rule file
// holds the result as a package variable, names it in its Rule's Config,
// and reads it with of.
func defineConfig[S sectionSettings](key string, defaults S) configSection[S] {
	return configSection[S]{key: key, defaults: defaults}
}

// Key is the section's key under rules:.
func (d configSection[S]) Key() string { return d.key }

// Default is the section when the file sets none of it.
func (d configSection[S]) Default() any { return d.defaults }

// Decode decodes n over the defaults (see config.RuleSection).
func (d configSection[S]) Decode(n *yaml.Node, path string, errs *config.Errors) (any, bool) {
	s := d.defaults
	if !config.DecodeRuleSection(n, path, &s, errs) {
		return nil, false
	}
	return s, true
}

// Validate checks a value Decode or Default returned.
func (d configSection[S]) Validate(value any, path string, errs *config.Errors) {
	if s, ok := value.(S); ok {
		s.validate(path, errs)
	}
}

// of is the section as cfg has it: what the file set, else the defaults. It
// is a map lookup and a copy, so rules read it at every evaluation.
func (d configSection[S]) of(cfg *config.RulesConfig) S {
	if s, ok := cfg.Sections[d.key].(S); ok {
		return s
	}
	return d.defaults
}

// edit changes the section in cfg (tests, and settings no file may set).
// cfg's other copies keep their sections.
func (d configSection[S]) edit(cfg *config.RulesConfig, change func(*S)) {
	s := d.of(cfg)
	change(&s)
	sections := maps.Clone(cfg.Sections)
	if sections == nil {
		sections = map[string]any{}
	}
	sections[d.key] = s
	cfg.Sections = sections
}

// threshold is the Threshold of key, a key of the section such as
// "warning" or "reallocated.warning", with its default as docs/rules.md
// writes it; a key the section does not have gets no default, which
// checkCatalogue refuses.
func (d configSection[S]) threshold(key string) Threshold {
	th := Threshold{Key: d.key + "." + key}
	if v, ok := yamlKey(reflect.ValueOf(d.defaults), key); ok {
		th.Default = docDefault(v)
	}
	return th
}

// thresholds are the Thresholds of keys of the section.
func (d configSection[S]) thresholds(keys ...string) []Threshold {
	out := make([]Threshold, len(keys))
	for i, k := range keys {
		out[i] = d.threshold(k)
	}
	return out
}

// yamlKey follows a dotted key (reallocated.warning) through the yaml tags
// of v's struct fields.
func yamlKey(v reflect.Value, key string) (reflect.Value, bool) {
	for part := range strings.SplitSeq(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		found := false
		for i := range v.NumField() {
			if name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ","); name == part {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return reflect.Value{}, false
		}
	}
	return v, true
}

// docDefault writes a default as docs/rules.md does: 80, 0.5, true, 10m,
// 24h, 35d (days from two on).
func docDefault(v reflect.Value) string {
	if d, ok := v.Interface().(config.Duration); ok {
		if d.D() >= 48*time.Hour && d.D()%(24*time.Hour) == 0 {
			return config.FormatDuration(d.D())
		}
		return docDuration(d.D())
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	}
	return fmt.Sprint(v.Interface())
}

// docDuration writes 5m, 1h, 24h, 1h10m as the docs do.
func docDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// zwatchYAMLOrder is the order the sections have always had in zwatch.yaml
// and in check-config's output, kept so that neither moves. A section it
// does not name (a new rule's) follows them in catalogue order: a new rule
// does not add its key here.
var zwatchYAMLOrder = [...]string{"redundancy", "errors", "capacity", "scrub", "smart", "arc", "watcher",
	"datasets", "snapshots", "replication", "pools", "kernel", "slow_io", "disks"}

// ConfigSections are the sections under rules: that the rules of a
// catalogue read, each once: what config decodes and validates them with
// (config.Catalog.RuleSections).
func ConfigSections(catalogue []Rule) []config.RuleSection {
	var out []config.RuleSection
	seen := map[string]bool{}
	for _, r := range catalogue {
		for _, s := range r.Config {
			if !seen[s.Key()] {
				seen[s.Key()] = true
				out = append(out, s)
			}
		}
	}
	rank := func(s config.RuleSection) int {
		if i := slices.Index(zwatchYAMLOrder[:], s.Key()); i >= 0 {
			return i
		}
		return len(zwatchYAMLOrder)
	}
	slices.SortStableFunc(out, func(a, b config.RuleSection) int { return rank(a) - rank(b) })
	return out
}

// Validation helpers of the sections, in the words config uses elsewhere.

// percent checks a percentage above 0 and at most 100.
func percent(errs *config.Errors, p string, v float64) {
	if v <= 0 || v > 100 {
		errs.Add(p, v, "must be a percentage above 0 and at most 100")
	}
}

// globs checks a list of dataset or pool globs.
func globs(errs *config.Errors, p string, list []string, want string) {
	for i, g := range list {
		glob(errs, fmt.Sprintf("%s[%d]", p, i), g, want)
	}
}

func glob(errs *config.Errors, p, g, want string) {
	if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" || strings.HasPrefix(g, "/") {
		errs.Add(p, g, "want %s (* does not cross /)", want)
	}
}
