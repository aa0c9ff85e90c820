package rules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/zwatch/zwatch/alert"
)

// TestWriteLegacyStateFixture writes legacyStateFixture from this
// commit's engine, when ZWATCH_WRITE_STATE_FIXTURE is set. One-off: the
// fixture must stay what 41d2458 wrote, so this goes once it is committed.
func TestWriteLegacyStateFixture(t *testing.T) {
	if os.Getenv("ZWATCH_WRITE_STATE_FIXTURE") == "" {
		t.Skip("set ZWATCH_WRITE_STATE_FIXTURE=1 to write " + legacyStateFixture)
	}
	e := newTestEngine()
	stateScenario(t, e)
	h := e.hosts[testHost]
	filled := map[string]bool{
		"arc_throttle_at": h.ARCThrottleAt != nil,
		"hangs.kstat":     h.Hangs != nil && len(h.Hangs.Kstat) > 0,
		"hangs.targets":   h.Hangs != nil && len(h.Hangs.Targets) > 0,
		"hangs.answers":   h.Hangs != nil && len(h.Hangs.Answers) > 0,
		"slow_io.leaves":  h.SlowIO != nil && len(h.SlowIO.Leaves) > 0,
		"slow_io.hung":    h.SlowIO != nil && len(h.SlowIO.Hung) > 0,
		"slow_io.clock":   h.SlowIO != nil && h.SlowIO.Clock.Known,
		"known_pools":     len(h.KnownPools) > 0,
		"forgotten_pools": len(h.Forgotten) > 0,
		"seen_disks":      len(h.SeenDisks) > 0,
		"zfs_version":     h.ZFSVersion != nil,
		"kernel":          len(h.Kernel) > 0,
		"counters":        len(h.Counters) > 0,
		"scrubs":          len(h.Scrubs) > 0,
		"capacity":        len(h.Capacity) > 0,
		"heartbeat":       h.Heartbeat != nil,
		"collectors":      len(h.Collectors) > 0,
		"leaves":          len(h.Leaves) > 0,
	}
	for field, ok := range filled {
		if !ok {
			t.Errorf("the scenario leaves %s empty", field)
		}
	}
	sent := 0
	for _, tr := range h.Alerts {
		if tr.A.State == alert.Firing && tr.LastSent != nil {
			sent++
		}
	}
	if sent < 8 {
		t.Errorf("%d firing alerts sent, want at least 8", sent)
	}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(legacyStateFixture), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacyStateFixture, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tr := range h.Alerts {
		t.Logf("%s %s sent=%v %s", tr.A.State, describe(tr.A), tr.LastSent != nil, tr.A.Summary)
	}
}
