package rules

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

const namePoolReadOnly = "PoolReadOnly"

// poolReadOnlyRule exists in this file only: it is what adding a rule
// takes. It reads the capacity facts zpool list already sends, and a dead
// pool carries it like the other alerts about the pool.
func poolReadOnlyRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolCapacity},
		Eval: poolCapacityEval(func(c *evalCtx, p *zfs.PoolList) {
			if !p.ReadOnly {
				return
			}
			c.emit(cond{name: namePoolReadOnly, severity: alert.Warning, pool: p.Name,
				labels:  map[string]string{"pool": p.Name},
				summary: fmt.Sprintf("pool %s is imported read-only", p.Name),
				desc:    "Writes to it fail. Export it and import it again without -o readonly=on once it is safe."})
		}),
		Alerts: []AlertInfo{{
			Name:        namePoolReadOnly,
			Severity:    "warning",
			Condition:   "pool imported read-only",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

const namePoolFragmented = "PoolFragmented"

// fragmentationSettings are rules.fragmentation, the section of
// poolFragmentedRule, defined in this file only: a rule with a threshold is
// its settings struct (keys, defaults, docs, validation), its rule, and its
// line in a catalogue.
type fragmentationSettings struct {
	Warning float64 `yaml:"warning" doc:"free-space fragmentation percent (zpool list FRAG) → warning"`
}

var fragmentationConfig = defineConfig("fragmentation", fragmentationSettings{Warning: 70})

func (f fragmentationSettings) validate(p string, errs *config.Errors) {
	percent(errs, p+".warning", f.Warning)
}

func poolFragmentedRule() Rule {
	return Rule{
		Reads:  []facts.Kind{facts.ZpoolCapacity},
		Config: []config.RuleSection{fragmentationConfig},
		Eval: poolCapacityEval(func(c *evalCtx, p *zfs.PoolList) {
			if p.FragmentPct == nil || *p.FragmentPct < fragmentationConfig.of(c.cfg).Warning {
				return
			}
			c.emit(cond{name: namePoolFragmented, severity: alert.Warning, pool: p.Name,
				labels:  map[string]string{"pool": p.Name},
				summary: fmt.Sprintf("pool %s is %g %% fragmented", p.Name, *p.FragmentPct),
				desc:    "Its free space is in small pieces: writes slow down. Free space, or send it to a new pool."})
		}),
		Alerts: []AlertInfo{{
			Name:        namePoolFragmented,
			Thresholds:  fragmentationConfig.thresholds("warning"),
			Severity:    "warning",
			Condition:   "free-space fragmentation (`zpool list` FRAG) at or above `fragmentation.warning` ({fragmentation.warning} %)",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

// A rule with a threshold is its file plus a catalogue line too: config
// decodes and validates its section from the file, with its key path in
// every error; the engine applies the file's value, or the default where
// the file has none; the example config and docs/rules.md state that
// default; and the stock catalogue knows nothing of it.
func TestCatalogueSeamThreshold(t *testing.T) {
	catalogue := append(Catalogue(), poolFragmentedRule())
	if err := checkCatalogue(catalogue); err != nil {
		t.Fatal(err)
	}
	file := "rules: {fragmentation: {warning: 60}}"
	if _, err := config.Parse(strings.NewReader(file), configCatalog(Catalogue())); err == nil || !strings.Contains(err.Error(), "rules.fragmentation: unknown key") {
		t.Errorf("the stock catalogue accepted a section it does not have: %v", err)
	}
	_, err := config.Parse(strings.NewReader("rules: {fragmentation: {warning: 150}}"), configCatalog(catalogue))
	if want := `rules.fragmentation.warning = "150": must be a percentage above 0 and at most 100`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a bad value: %v, want %s", err, want)
	}
	_, err = config.Parse(strings.NewReader("rules: {fragmentation: {warnin: 60}}"), configCatalog(catalogue))
	if want := `rules.fragmentation.warnin: unknown key (line 1): did you mean "warning"?; valid keys here: warning`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a misspelt key: %v, want %s", err, want)
	}
	loaded, err := config.Parse(strings.NewReader(file), configCatalog(catalogue))
	if err != nil {
		t.Fatal(err)
	}

	frag := func(pct float64) bus.Envelope {
		return capEnv(t, []zfs.PoolList{{Name: "tank", CapacityPct: 12, FragmentPct: &pct}}, nil, t0)
	}
	fromFile := NewEngineWith(loaded.Config.Rules, catalogue, nil)
	observe(t, fromFile, frag(65), t0)
	if a := find(fromFile, namePoolFragmented); a == nil || a.Summary != "pool tank is 65 % fragmented" {
		t.Errorf("fragmentation.warning 60 from the file did not raise it at 65 %%: %+v", a)
	}
	byDefault := NewEngineWith(config.DefaultRules(), catalogue, nil)
	observe(t, byDefault, frag(65), t0)
	if a := find(byDefault, namePoolFragmented); a != nil {
		t.Errorf("raised at 65 %% under its default of 70: %+v", a)
	}
	observe(t, byDefault, frag(70), t0)
	if find(byDefault, namePoolFragmented) == nil {
		t.Error("not raised at its default of 70 %")
	}

	example, err := config.RulesExample(ConfigSections(catalogue))
	if want := "  fragmentation:\n    warning: 70          # free-space fragmentation percent (zpool list FRAG) → warning\n"; err != nil || !strings.HasSuffix(example, want) {
		t.Errorf("the example config's rules: section ends\n%s\nwant\n%s(%v)", example[max(0, len(example)-200):], want, err)
	}
	if _, err := config.Parse(strings.NewReader(example), configCatalog(catalogue)); err != nil {
		t.Errorf("the example does not read back: %v", err)
	}
	table, err := docTable(catalogue)
	if want := "| `PoolFragmented` | warning | free-space fragmentation (`zpool list` FRAG) at or above `fragmentation.warning` (70 %) |\n"; err != nil || !strings.HasSuffix(table, want) {
		t.Errorf("docs/rules.md's table does not end with\n%s(%v)", want, err)
	}
}

// A new rule is its own declaration plus a catalogue that lists it: config
// accepts its name, the engine runs it in its scope and applies its
// inhibition, and nothing else changes.
func TestCatalogueSeam(t *testing.T) {
	catalogue := append(Catalogue(), poolReadOnlyRule())
	if err := checkCatalogue(catalogue); err != nil {
		t.Fatal(err)
	}

	file := "rules: {for: {PoolReadOnly: 1m}}"
	if _, err := config.Parse(strings.NewReader(file), configCatalog(Catalogue())); err == nil || !strings.Contains(err.Error(), "rules.for.PoolReadOnly") {
		t.Errorf("the stock catalogue accepted an alert it does not have: %v", err)
	}
	loaded, err := config.Parse(strings.NewReader(file), configCatalog(catalogue))
	if err != nil {
		t.Fatal(err)
	}

	e := NewEngineWith(loaded.Config.Rules, catalogue, nil)
	readOnly := capEnv(t, []zfs.PoolList{{Name: "tank", CapacityPct: 12, ReadOnly: true}}, nil, t0)
	observe(t, e, readOnly, t0)
	a := find(e, namePoolReadOnly)
	if a == nil || a.State != alert.Pending || a.Summary != "pool tank is imported read-only" {
		t.Fatalf("PoolReadOnly is not pending its 1m `for` from the config: %+v", a)
	}
	e.Tick(t0.Add(time.Minute))
	if a := find(e, namePoolReadOnly); a == nil || a.State != alert.Firing {
		t.Fatalf("PoolReadOnly did not fire after its `for`: %+v", a)
	}

	// A FAULTED pool tank carries it, through the inhibition it declared.
	observe(t, e, poolsEnv(t, []*zfs.Pool{{Name: "tank", State: zfs.StateFaulted}}, t0.Add(time.Minute)), t0.Add(time.Minute))
	tr := e.hosts[testHost].Alerts[find(e, namePoolReadOnly).Fingerprint]
	if !tr.Inhibited {
		t.Error("PoolState FAULTED does not inhibit PoolReadOnly of the same pool")
	}

	stock := newTestEngine()
	observe(t, stock, readOnly, t0)
	if find(stock, namePoolReadOnly) != nil {
		t.Error("the stock engine raised an alert its catalogue does not have")
	}
}
