package runner

import (
	"context"
	"testing"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/rules/internal/rulestest"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// The helpers both the engine's tests and the runner's use (rulestest).
var (
	statusPools     = rulestest.StatusPools
	newSilence      = rulestest.NewSilence
	newRaidz2       = rulestest.NewRaidz2
	noteLines       = rulestest.NoteLines
	sentNames       = rulestest.SentNames
	sameList        = rulestest.SameList
	openStateBucket = rulestest.OpenStateBucket
)

// The few helpers of package rules' tests that the runner's use.

const testHost = "nas1"

const (
	faultFile   = "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt"
	healthyFile = "zpool-status/freebsd-raidz1-gpt-label-online.txt"
)

// stateKey is the key of host's state in bus.StateBucket (rules' store.go).
func stateKey(host string) string { return "rules.host." + bus.Token(host) }

// openTestBus opens an embedded bus on a fresh state directory for the
// rest of the test.
func openTestBus(ctx context.Context, t testing.TB) *bus.Bus {
	t.Helper()
	return viewtest.OpenBus(ctx, t)
}
