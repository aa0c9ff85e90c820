package rules

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
)

// Everything from here to the test is what a newcomer writes for a rule
// about a new kind of thing: the kind of fact, its scope, the rule's
// settings, its memory and the rule. Nothing outside this file knows any
// of it; the catalogue that lists the rule is the test's.

// tapeLibraryData is the payload of a kind of fact that exists only in
// this test: what a tape library says about its drives.
type tapeLibraryData struct {
	Drives []tapeDrive `json:"drives"`
}

type tapeDrive struct {
	Slot        int  `json:"slot"`
	CleaningDue bool `json:"cleaning_due"`
}

// tapeLibrary is the kind: one declaration.
var tapeLibrary = facts.Define[tapeLibraryData]("tape.library")

// eachTapeDrive is the scope its rules judge: each drive of the latest
// report. One declaration too; the engine has no code for it.
var eachTapeDrive = scopeOf(tapeLibrary, "tape drives", func(d *tapeLibraryData) []tapeDrive { return d.Drives })

// tapeSettings are rules.tape: how long a drive may go uncleaned.
type tapeSettings struct {
	CleaningOverdue config.Duration `yaml:"cleaning_overdue" doc:"a drive asking for cleaning longer than this is a warning"`
}

var tapeConfig = defineConfig("tape", tapeSettings{CleaningOverdue: config.Duration(7 * 24 * time.Hour)})

func (s tapeSettings) validate(p string, errs *config.Errors) {
	config.CheckMinDuration(errs, p+".cleaning_overdue", s.CleaningOverdue, time.Hour)
}

// tapeCleaning is what the rule remembers of a host: since when each
// drive has asked for cleaning, which no single report says.
type tapeCleaning struct {
	DueSince map[int]time.Time `json:"due_since,omitempty"`
}

var tapeMemory = remember[tapeCleaning]("tape_cleaning", 1, nil)

const nameTapeCleaningOverdue = "TapeCleaningOverdue"

func tapeCleaningRule() Rule {
	return Rule{
		Reads:  []facts.Kind{tapeLibrary},
		Config: []config.RuleSection{tapeConfig},
		Memory: []memoryDef{tapeMemory},
		Eval: eachTapeDrive.each(func(c *evalCtx, d *tapeDrive) {
			mem := tapeMemory.of(c.h)
			since, known := mem.DueSince[d.Slot]
			switch {
			case !d.CleaningDue && known:
				delete(mem.DueSince, d.Slot)
				c.h.dirty = true
				return
			case !d.CleaningDue:
				return
			case !known:
				if mem.DueSince == nil {
					mem.DueSince = map[int]time.Time{}
				}
				mem.DueSince[d.Slot], since = c.now, c.now
				c.h.dirty = true
			}
			if c.now.Sub(since) < tapeConfig.of(c.cfg).CleaningOverdue.D() {
				return
			}
			slot := fmt.Sprint(d.Slot)
			c.emit(cond{name: nameTapeCleaningOverdue, severity: alert.Warning,
				labels:  map[string]string{"slot": slot},
				summary: fmt.Sprintf("tape drive %s has asked for cleaning since %s", slot, since.UTC().Format("2006-01-02")),
				desc:    "Load a cleaning cartridge into it: a dirty head writes tapes that may not read back."})
		}),
		Alerts: []AlertInfo{{
			Name:       nameTapeCleaningOverdue,
			Thresholds: tapeConfig.thresholds("cleaning_overdue"),
			Severity:   "warning",
			Condition:  "a drive asks for cleaning for `tape.cleaning_overdue` ({tape.cleaning_overdue})",
		}},
	}
}

// tapeEnv is a tape library report of host nas1 at at.
func tapeEnv(t testing.TB, at time.Time, drives ...tapeDrive) bus.Envelope {
	t.Helper()
	return envOf(t, tapeLibrary.Name(), "tape_library", at, tapeLibraryData{Drives: drives})
}

// The hard case of the recipe: a rule with a threshold and a memory, over
// a kind of fact and a scope that exist only in this file, is its file
// plus a catalogue line. Config decodes and checks its section, the engine
// takes in the new kind and runs the rule over each drive, the memory is
// saved with the host's state and read back by a new engine, and the
// threshold from the file decides. (catalogue_views_test.go shows its
// alert on the status page and in /metrics.)
func TestCatalogueSeamHardCase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	catalogue := append(Catalogue(), tapeCleaningRule())
	if err := checkCatalogue(catalogue); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse(strings.NewReader("rules: {tape: {cleaning_overdue: 30m}}"), configCatalog(catalogue)); err == nil ||
		!strings.Contains(err.Error(), "rules.tape.cleaning_overdue") {
		t.Errorf("a threshold below its minimum: %v", err)
	}
	loaded, err := config.Parse(strings.NewReader("rules: {tape: {cleaning_overdue: 2d}}"), configCatalog(catalogue))
	if err != nil {
		t.Fatal(err)
	}
	cfg := loaded.Config.Rules

	_, kv := openStateBucket(ctx, t)
	first := NewEngineWith(cfg, catalogue, nil)
	observe(t, first, tapeEnv(t, t0, tapeDrive{Slot: 1}, tapeDrive{Slot: 2, CleaningDue: true}), t0)
	if a := find(first, nameTapeCleaningOverdue); a != nil {
		t.Fatalf("raised on the first report: %+v", a)
	}
	if err := first.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}

	// A restart: what the rule remembers comes back with the state.
	second := NewEngineWith(cfg, catalogue, nil)
	if err := second.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(50 * time.Hour)
	observe(t, second, tapeEnv(t, later, tapeDrive{Slot: 1}, tapeDrive{Slot: 2, CleaningDue: true}), later)
	a := find(second, nameTapeCleaningOverdue)
	if want := "tape drive 2 has asked for cleaning since " + t0.UTC().Format("2006-01-02"); a == nil || a.Summary != want || a.State != alert.Firing {
		t.Fatalf("after 50 h over a 2d threshold, got %+v, want firing %q", a, want)
	}

	// The default (7d) says it is not overdue yet.
	byDefault := NewEngineWith(config.DefaultRules(), catalogue, nil)
	if err := byDefault.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	observe(t, byDefault, tapeEnv(t, later, tapeDrive{Slot: 2, CleaningDue: true}), later)
	if a := find(byDefault, nameTapeCleaningOverdue); a != nil {
		t.Errorf("raised under the default of 7d: %+v", a)
	}

	// Cleaned: the drive stops asking, the alert resolves, the memory forgets it.
	cleaned := later.Add(time.Hour)
	observe(t, second, tapeEnv(t, cleaned, tapeDrive{Slot: 1}, tapeDrive{Slot: 2}), cleaned)
	if a := find(second, nameTapeCleaningOverdue); a != nil && a.State != alert.Resolved {
		t.Errorf("still %s after the drive was cleaned", a.State)
	}
	if due := tapeMemory.peek(second.hosts["nas1"]).DueSince; len(due) != 0 {
		t.Errorf("the memory still holds %v", due)
	}

	// Docs and the example config state the rule's default.
	example, err := config.RulesExample(ConfigSections(catalogue))
	if want := "  tape:\n    cleaning_overdue: 7d"; err != nil || !strings.Contains(example, want) {
		t.Errorf("the example config's rules: section lacks %q (%v)", want, err)
	}
	table, err := docTable(catalogue)
	if want := "| `TapeCleaningOverdue` | warning | a drive asks for cleaning for `tape.cleaning_overdue` (7d) |\n"; err != nil || !strings.HasSuffix(table, want) {
		t.Errorf("docs/rules.md's table does not end with\n%s(%v)", want, err)
	}
}

// A catalogue whose declared scopes are wrong is refused by name.
func TestDeclaredScopesChecked(t *testing.T) {
	clash := tapeCleaningRule()
	clash.Eval = scopeOf(tapeLibrary, scopeDatasets, func(d *tapeLibraryData) []tapeDrive { return d.Drives }).each(func(*evalCtx, *tapeDrive) {})
	clash.Alerts = []AlertInfo{{Name: "TapeClash", Severity: "warning", Condition: "x"}}
	perTarget := facts.Define[tapeLibraryData]("tape.drive", facts.PerTarget())
	each := tapeCleaningRule()
	each.Eval = scopeOf(perTarget, "tape drive", func(d *tapeLibraryData) []tapeDrive { return d.Drives }).each(func(*evalCtx, *tapeDrive) {})
	each.Alerts = []AlertInfo{{Name: "TapeEach", Severity: "warning", Condition: "x"}}
	err := checkCatalogue(append(Catalogue(), tapeCleaningRule(), clash, each))
	for _, want := range []string{
		`scope "datasets" is declared twice`,
		`scope "tape drive" reads tape.drive, a per-target kind`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkCatalogue: %v, want %q", err, want)
		}
	}
}
