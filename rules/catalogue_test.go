package rules

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
)

var update = flag.Bool("update", false, "rewrite the alert table of docs/rules.md from Catalogue()")

// checkCatalogue reports what makes a catalogue unusable: a rule without
// code or alerts, facts no collector sends, a name twice, an inhibition
// declared the wrong way round.
func checkCatalogue(catalogue []Rule) error {
	kinds := map[string]bool{}
	for _, k := range facts.Kinds() {
		kinds[k.Name()] = true
	}
	errs := declaredScopeProblems(catalogue)
	for _, r := range catalogue {
		if ev, ok := r.Eval.(declaredEval); ok {
			kinds[ev.newScope().kind().Name()] = true
		}
	}
	seen := map[string]bool{}
	sections := map[string]reflect.Type{}
	for i, r := range catalogue {
		for _, s := range r.Config {
			t := reflect.TypeOf(s.Default())
			if prev, ok := sections[s.Key()]; ok && prev != t {
				errs = append(errs, fmt.Sprintf("rule %d: section %s is defined twice (%s and %s): one file defines it, the others name that", i, s.Key(), prev, t))
			}
			sections[s.Key()] = t
		}
		if r.Scope() == "" || len(r.Alerts) == 0 || len(r.Reads) == 0 {
			errs = append(errs, fmt.Sprintf("rule %d (%v): needs Eval, Alerts and Reads", i, r.Alerts))
		}
		for _, k := range r.Reads {
			if !kinds[k.Name()] {
				errs = append(errs, fmt.Sprintf("rule %d reads %q, which is no kind of fact", i, k))
			}
		}
		for _, a := range r.Alerts {
			if a.Name == "" || seen[a.Name] {
				errs = append(errs, fmt.Sprintf("alert name %q is empty or listed twice", a.Name))
			}
			seen[a.Name] = true
			if a.Severity == "" || a.Condition == "" {
				errs = append(errs, a.Name+": needs Severity and Condition for the docs")
			}
			for _, th := range a.Thresholds {
				if _, err := sectionDefault(r, th.Key); err != nil || th.Default == "" {
					errs = append(errs, fmt.Sprintf("%s: threshold %s is no key of the sections its rule reads (Config)", a.Name, th.Key))
				}
			}
			for _, in := range a.Inhibits {
				if len(in.Source.Names) > 0 {
					errs = append(errs, a.Name+": an inhibition it is the source of names a source")
				}
			}
			for _, in := range a.InhibitedBy {
				if !reflect.DeepEqual(in.Target, Matcher{}) {
					errs = append(errs, a.Name+": an inhibition it is the target of names a target")
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("catalogue: %s", strings.Join(errs, "; "))
	}
	return nil
}

func TestCatalogueWellFormed(t *testing.T) {
	if err := checkCatalogue(Catalogue()); err != nil {
		t.Fatal(err)
	}
}

// The defaults the catalogue (and so the docs) states are the ones its
// config sections have: each threshold is a key of a section its rule
// reads, and its default as written reads back as that key's default.
func TestCatalogueDefaultsMatchConfig(t *testing.T) {
	for _, r := range Catalogue() {
		for _, a := range r.Alerts {
			for _, th := range a.Thresholds {
				v, err := sectionDefault(r, th.Key)
				if err != nil {
					t.Errorf("%s: %v", a.Name, err)
					continue
				}
				if ok, err := sameValue(v, th.Default); err != nil || !ok {
					t.Errorf("%s: rules.%s: catalogue says %q, its section has %v (%v)", a.Name, th.Key, th.Default, v.Interface(), err)
				}
			}
		}
	}
}

// sectionDefault is the default of key (kernel.bursts) in the section of
// r's Config that it names.
func sectionDefault(r Rule, key string) (reflect.Value, error) {
	section, rest, _ := strings.Cut(key, ".")
	for _, s := range r.Config {
		if s.Key() == section {
			if v, ok := yamlKey(reflect.ValueOf(s.Default()), rest); ok {
				return v, nil
			}
			return reflect.Value{}, fmt.Errorf("rules.%s: section %s has no key %s", key, section, rest)
		}
	}
	return reflect.Value{}, fmt.Errorf("rules.%s: the rule's Config has no section %s", key, section)
}

// sameValue reports whether doc, read as v's type reads it from YAML, is v.
func sameValue(v reflect.Value, doc string) (bool, error) {
	if v.Type() == reflect.TypeFor[config.Duration]() {
		d, err := config.ParseDuration(doc)
		return d == time.Duration(v.Int()), err
	}
	switch v.Kind() {
	case reflect.Float64:
		f, err := strconv.ParseFloat(doc, 64)
		return f == v.Float(), err
	case reflect.Int:
		n, err := strconv.ParseInt(doc, 10, 64)
		return n == v.Int(), err
	case reflect.Uint64:
		n, err := strconv.ParseUint(doc, 10, 64)
		return n == v.Uint(), err
	case reflect.Bool:
		b, err := strconv.ParseBool(doc)
		return b == v.Bool(), err
	}
	return false, fmt.Errorf("a %s is no threshold", v.Type())
}

// The table markers in docs/rules.md; between them is the alert table.
const (
	tableBegin = "<!-- alert table: generated from rules.Catalogue() by `go test ./rules -run TestRulesDocTable -update` -->\n"
	tableEnd   = "<!-- end of alert table -->\n"
)

// docs/rules.md lists the catalogue's alerts, in its order, with the
// defaults it declares. The test only reads the file unless -update is set.
func TestRulesDocTable(t *testing.T) {
	want, err := docTable(Catalogue())
	if err != nil {
		t.Fatal(err)
	}
	const file = "../docs/rules.md"
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := bytes.Cut(doc, []byte(tableBegin))
	got, after, ok2 := bytes.Cut(rest, []byte(tableEnd))
	if !ok1 || !ok2 {
		t.Fatalf("%s: the alert table's markers are missing:\n%s%s", file, tableBegin, tableEnd)
	}
	if string(got) == want {
		return
	}
	if *update {
		out := slices.Concat(before, []byte(tableBegin), []byte(want), []byte(tableEnd), after)
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the alert table of %s", file)
		return
	}
	gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	for i := range max(len(gotLines), len(wantLines)) {
		g, w := lineAt(gotLines, i), lineAt(wantLines, i)
		if g != w {
			t.Errorf("%s: alert table line %d differs from the catalogue (rerun with -update):\n got: %s\nwant: %s", file, i+1, g, w)
			break
		}
	}
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

var placeholder = regexp.MustCompile(`\{([a-z_.]+)\}`)

// docTable renders the alert table of docs/rules.md.
func docTable(catalogue []Rule) (string, error) {
	var b strings.Builder
	b.WriteString("| alert | severity | condition |\n|---|---|---|\n")
	for _, a := range Alerts(catalogue) {
		sev, err := expandDoc(a, a.Severity)
		if err != nil {
			return "", err
		}
		cond, err := expandDoc(a, a.Condition)
		if err != nil {
			return "", err
		}
		if mentions := strings.Contains(a.Severity+a.Condition, "{for}"); mentions != (a.For != 0) {
			return "", fmt.Errorf("%s: its docs must name its `for` ({for}) exactly when it has one (%s)", a.Name, a.For)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", a.Name, sev, cond)
	}
	return b.String(), nil
}

// expandDoc fills in {for} and {key} from a's declared defaults.
func expandDoc(a AlertInfo, s string) (string, error) {
	var err error
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		key := m[1 : len(m)-1]
		if key == "for" {
			return docDuration(a.For)
		}
		for _, th := range a.Thresholds {
			if th.Key == key {
				return th.Default
			}
		}
		err = fmt.Errorf("%s: its docs name {%s}, which is not one of its thresholds", a.Name, key)
		return m
	})
	return out, err
}

func TestDocDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "1m", 90 * time.Second: "1m30s", time.Hour: "1h", 24 * time.Hour: "24h", 70 * time.Minute: "1h10m",
	} {
		if got := docDuration(d); got != want {
			t.Errorf("docDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

// legacyInhibit is the hand-written inhibition the catalogue's inhibit
// rules replaced, kept to prove they do the same.
func legacyInhibit(h *hostState) {
	inhibitedByPool := func(name string) bool {
		switch name {
		case nameVdevState, nameRedundancy, nameVdevErrors, nameVdevErrorRate, nameSlowIO,
			nameDiskIncident, namePoolStatusMessage, nameResilverAtRisk:
			return true
		}
		return false
	}
	deadPools := map[string]bool{}
	suspended := map[string]bool{}
	anySuspended := false
	incidents := map[string]bool{}
	for _, t := range h.Alerts {
		if t.A.State != alert.Firing {
			continue
		}
		switch t.A.Name {
		case namePoolState:
			switch t.A.Labels["state"] {
			case "FAULTED", "UNAVAIL", "SUSPENDED":
				deadPools[t.A.Labels["pool"]] = true
			}
		case namePoolSuspended:
			suspended[t.A.Labels["pool"]] = true
			anySuspended = true
		case nameDiskIncident:
			incidents[t.Serial] = true
		}
	}
	carriedBySuspended := func(name string) bool {
		switch name {
		case namePoolState, namePoolStatusMessage, nameVdevState, nameRedundancy, nameVdevErrors,
			nameVdevErrorRate, namePoolDataErrors, nameDiskIncident, nameResilver, nameResilverAtRisk, nameScrubErrors:
			return true
		}
		return false
	}
	for _, t := range h.Alerts {
		inh := false
		if inhibitedByPool(t.A.Name) && deadPools[t.A.Labels["pool"]] {
			inh = true
		}
		if t.A.Name != nameDiskIncident && t.Serial != "" && incidents[t.Serial] && t.A.Name != nameResilverAtRisk {
			inh = true
		}
		if carriedBySuspended(t.A.Name) && suspended[t.A.Labels["pool"]] {
			inh = true
		}
		if (t.A.Name == nameCommandHangs || t.A.Name == nameCollectorStale) && anySuspended && slices.Contains(zpoolCollectors, t.A.Labels["collector"]) {
			inh = true
		}
		if inh != t.Inhibited {
			t.Inhibited = inh
			h.dirty = true
		}
	}
}

// The catalogue's inhibit rules inhibit exactly what the hand-written code
// did, over random mixes of alerts of every name, state, pool and disk.
func TestInhibitRulesMatchLegacy(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	names := Names()
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	e := newTestEngine()
	for round := 0; round < 5000; round++ {
		mine, theirs := newHostState(testHost), newHostState(testHost)
		for i := rng.IntN(12); i >= 0; i-- {
			labels := map[string]string{}
			if p := pick("", "tank", "vault", "-"); p != "-" {
				labels["pool"] = p
			}
			if st := pick("FAULTED", "UNAVAIL", "SUSPENDED", "DEGRADED", "-"); st != "-" {
				labels["state"] = st
			}
			if c := pick("zpool_status", "smart", "-"); c != "-" {
				labels["collector"] = c
			}
			a := alert.Alert{Name: pick(names...), Labels: labels, State: alert.State(pick(string(alert.Pending), string(alert.Firing), string(alert.Firing), string(alert.Resolved)))}
			serial, inhibited := pick("", "S1", "S2"), rng.IntN(2) == 0
			fp := fmt.Sprint(i)
			mine.Alerts[fp] = &tracked{A: a, Serial: serial, Inhibited: inhibited}
			theirs.Alerts[fp] = &tracked{A: a, Serial: serial, Inhibited: inhibited}
		}
		e.inhibit(mine)
		legacyInhibit(theirs)
		if mine.dirty != theirs.dirty {
			t.Fatalf("round %d: dirty %v, legacy %v", round, mine.dirty, theirs.dirty)
		}
		for fp, t2 := range theirs.Alerts {
			if m := mine.Alerts[fp]; m.Inhibited != t2.Inhibited {
				t.Fatalf("round %d: %s %v serial %q inhibited %v, legacy %v", round, m.A.Name, m.A.Labels, m.Serial, m.Inhibited, t2.Inhibited)
			}
		}
	}
}

// Inhibitions named by several targets are looked for once.
func TestInhibitRulesMerged(t *testing.T) {
	rs := inhibitRules(Catalogue())
	if len(rs) != 4 {
		t.Fatalf("%d inhibit rules, want 4 (suspended pool: its parts, its hung zpool; dead pool, disk incident): %+v", len(rs), rs)
	}
	if got := rs[2].Target.Names; !slices.Equal(got, []string{namePoolStatusMessage, nameVdevState, nameRedundancy,
		nameVdevErrors, nameVdevErrorRate, nameSlowIO, nameResilverAtRisk, nameDiskIncident}) {
		t.Errorf("a dead pool carries %v", got)
	}
}

// builtinScopes are the scopes of the engine's own evaluations (engine.go):
// a declared scope under one of their keys would resolve their alerts.
var builtinScopes = []string{scopeStatus, scopeCapacity, scopeARC, scopeWatcher, scopeCorrelate,
	scopeSnapshots, scopePools, scopeKernel}

// declaredScopeProblems says what is wrong with a catalogue's declared
// scopes: two declarations under one key, a built-in key, a per-target
// kind (its facts are one per target, the scope keeps one per host).
func declaredScopeProblems(catalogue []Rule) []string {
	var out []string
	byKey := map[string]any{}
	for _, r := range catalogue {
		ev, ok := r.Eval.(declaredEval)
		if !ok {
			continue
		}
		g := ev.newScope()
		key := g.key()
		if prev, ok := byKey[key]; ok && prev != ev.declaration() {
			out = append(out, fmt.Sprintf("scope %q is declared twice: declare it once and name that", key))
		}
		byKey[key] = ev.declaration()
		if slices.Contains(builtinScopes, key) || strings.HasPrefix(key, scopeSmart) {
			out = append(out, fmt.Sprintf("scope %q is the engine's own: pick another key", key))
		}
		if g.kind().PerTarget() {
			out = append(out, fmt.Sprintf("scope %q reads %s, a per-target kind: a declared scope reads one fact per host", key, g.kind().Name()))
		}
	}
	return out
}
