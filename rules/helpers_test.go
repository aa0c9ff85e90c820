package rules

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules/internal/rulestest"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// The helpers both the engine's tests and the runner's use (rulestest).
var (
	statusPools     = rulestest.StatusPools
	newSilence      = rulestest.NewSilence
	noteLines       = rulestest.NoteLines
	sentNames       = rulestest.SentNames
	sameList        = rulestest.SameList
	openStateBucket = rulestest.OpenStateBucket
)

const testHost = "nas1"

var t0 = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)

// envOf wraps data as a collector would and reads it back through
// bus.Decode: tests go through the real message path.
func envOf(t testing.TB, kind, collector string, at time.Time, data any) bus.Envelope {
	t.Helper()
	msg, err := bus.Wrap(kind, testHost, collector, at, data)
	if err != nil {
		t.Fatal(err)
	}
	env, err := bus.Decode(msg, kind, nil)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// statusEnv: fixture → zpool.status message.
func statusEnv(t testing.TB, file string, at time.Time) bus.Envelope {
	t.Helper()
	return envOf(t, facts.ZpoolStatus.Name(), "zpool_status", at, facts.StatusData{Source: "text", Pools: statusPools(t, file)})
}

func poolsEnv(t testing.TB, pools []*zfs.Pool, at time.Time) bus.Envelope {
	return envOf(t, facts.ZpoolStatus.Name(), "zpool_status", at, facts.StatusData{Source: "text", Pools: pools})
}

// smartReport parses a real smartctl -j fixture.
func smartReport(t testing.TB, file string) *smart.Report {
	t.Helper()
	return parseTestdata(t, filepath.Join("smartctl", file), smart.Parse)
}

// parseTestdata parses the file at path below testdata/ with parse.
func parseTestdata[T any](t testing.TB, path string, parse func(io.Reader) (T, error)) T {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func smartEnv(t testing.TB, r *smart.Report, at time.Time) bus.Envelope {
	return envOf(t, facts.Smart.Name(), "smart", at, r)
}

func newTestEngine(mod ...func(*config.RulesConfig)) *Engine {
	cfg := config.DefaultRules()
	for _, m := range mod {
		m(&cfg)
	}
	return NewEngine(cfg, nil)
}

func observe(t testing.TB, e *Engine, env bus.Envelope, now time.Time) {
	t.Helper()
	if err := e.Observe(env, now); err != nil {
		t.Fatal(err)
	}
}

// active lists the engine's non-resolved alerts of the given names as
// "Name severity label=value..." (labels without host/alertname), sorted.
func active(e *Engine, names ...string) []string {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	for _, a := range e.Alerts(testHost) {
		if a.State == alert.Resolved || (len(want) > 0 && !want[a.Name]) {
			continue
		}
		out = append(out, describe(a))
	}
	sort.Strings(out)
	return out
}

func describe(a alert.Alert) string {
	var ls []string
	for k, v := range a.Labels {
		if k != "host" && k != "alertname" {
			ls = append(ls, k+"="+v)
		}
	}
	sort.Strings(ls)
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", a.Name, a.Severity, strings.Join(ls, " ")))
}

func find(e *Engine, name string) *alert.Alert {
	for _, a := range e.Alerts(testHost) {
		if a.Name == name && a.State != alert.Resolved {
			return &a
		}
	}
	return nil
}

type configRules = config.RulesConfig

// forZero makes the named rules fire at once.
func forZero(names ...string) map[string]config.Duration {
	m := map[string]config.Duration{}
	for _, n := range names {
		m[n] = 0
	}
	return m
}

func identityFor(serial, wwn string) disk.Identity { return disk.Identity{Serial: serial, WWN: wwn} }

// openTestBus opens an embedded bus on a fresh state directory for the
// rest of the test.
func openTestBus(ctx context.Context, t testing.TB) *bus.Bus {
	t.Helper()
	return viewtest.OpenBus(ctx, t)
}
