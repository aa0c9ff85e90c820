package daemon

import (
	"log/slog"
	"runtime"
	"testing"
	"time"
)

// The settler acts once the resident set has grown past the last settle and
// then stayed flat for its period, and not during growth or at rest.
func TestSettlerWaitsForQuietAfterGrowth(t *testing.T) {
	const mb = 1 << 20
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	s := &settler{after: 2 * time.Minute, log: slog.New(slog.DiscardHandler),
		settled: 25 * mb, peak: 25 * mb, grewAt: t0}
	steps := []struct {
		at   time.Duration
		rss  int64
		want bool
	}{
		{30 * time.Second, 25*mb + mb/2, false}, // noise within the slack
		{5 * time.Minute, 25 * mb, false},       // quiet, nothing left behind
		{5*time.Minute + 30*time.Second, 31 * mb, false},
		{6 * time.Minute, 33 * mb, false}, // still growing: the incident goes on
		{7 * time.Minute, 33 * mb, false}, // flat for 1 of 2 minutes
		{7*time.Minute + 30*time.Second, 33*mb - mb/2, false},
		{7*time.Minute + 59*time.Second, 33 * mb, false},
		{8 * time.Minute, 33 * mb, true}, // flat for 2 minutes
	}
	for _, st := range steps {
		if got := s.observe(t0.Add(st.at), st.rss); got != st.want {
			t.Fatalf("at %s with %d MiB: settle %v, want %v", st.at, st.rss/mb, got, st.want)
		}
	}
}

// On Linux the resident set is read, and settling leaves it no higher.
func TestSettleMemoryReadsAndLowersRSS(t *testing.T) {
	before, ok := residentBytes()
	if !ok {
		t.Skip("resident set not readable on this OS")
	}
	garbage := make([][]byte, 0, 64)
	for range 64 {
		garbage = append(garbage, make([]byte, 256<<10))
	}
	runtime.KeepAlive(garbage)
	settleMemory()
	after, ok := residentBytes()
	if !ok || after <= 0 {
		t.Fatalf("resident set after settling: %d, %v", after, ok)
	}
	if after > before+settleSlack {
		t.Errorf("resident set %d KiB before the 16 MiB of garbage, %d KiB after settling, want no higher", before>>10, after>>10)
	}
	t.Logf("resident %d KiB → %d KiB", before>>10, after>>10)
}
