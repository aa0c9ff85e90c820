// Package rulestest holds what the tests of the rule engine (package
// rules) and of its runner (rules/runner) share: the real zpool status
// fixtures read into pools, a real pool to fail disks of, silences as a
// person types them, and notifications as one line per alert.
package rulestest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/views/statusview/viewtest"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/silence"
)

// OpenStateBucket opens an embedded bus on a fresh state directory for
// the rest of the test, and its state bucket.
func OpenStateBucket(ctx context.Context, t testing.TB) (*bus.Bus, jetstream.KeyValue) {
	t.Helper()
	b := viewtest.OpenBus(ctx, t)
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	return b, kv
}

// Testdata is the repository's testdata folder, wherever the test runs.
func Testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata")
}

// StatusPools parses a real zpool status fixture (text or -j) under testdata.
func StatusPools(t testing.TB, file string) []*zfs.Pool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Testdata(), file))
	if err != nil {
		t.Fatal(err)
	}
	pools, err := zfs.ParseStatus(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return pools
}

// NewSilence is a silence of matchers (as typed on the command line) from
// start to end, covering up to max.
func NewSilence(t testing.TB, matchers string, start, end time.Time, max alert.Severity) silence.Silence {
	t.Helper()
	ms, err := silence.ParseMatchers(strings.Fields(matchers))
	if err != nil {
		t.Fatal(err)
	}
	id, err := silence.NewID()
	if err != nil {
		t.Fatal(err)
	}
	s := silence.Silence{ID: id, Matchers: ms, StartsAt: start, EndsAt: end, CreatedBy: "alice", Comment: "waiting for the new disk", MaxSeverity: max, UpdatedAt: start}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// Raidz2 is the real TrueNAS raidz2 pool tank; Fail marks its first n
// disks UNAVAIL (n = 0: all back ONLINE).
type Raidz2 struct {
	pools []*zfs.Pool
}

// NewRaidz2 reads the pool.
func NewRaidz2(t testing.TB) *Raidz2 {
	return &Raidz2{pools: StatusPools(t, "zpool-status/linux-truenas-raidz2-online-scrubbed-tabs.txt")}
}

// Fail marks the first n disks UNAVAIL, and the vdev and pool DEGRADED.
func (r *Raidz2) Fail(n int) []*zfs.Pool {
	p := r.pools[0]
	p.State, p.Vdevs[0].State = "ONLINE", "ONLINE"
	if n > 0 {
		p.State, p.Vdevs[0].State = "DEGRADED", "DEGRADED"
	}
	for i, l := range p.Vdevs[0].Leaves() {
		l.State = "ONLINE"
		if i < n {
			l.State = "UNAVAIL"
		}
	}
	return r.pools
}

// NoteLines renders notifications as one line per alert and "--" after
// each notification.
func NoteLines(ns []alert.Notification) []string {
	var out []string
	for _, n := range ns {
		for _, a := range n.Alerts {
			out = append(out, fmt.Sprintf("%s %s %s: %s", a.State, a.Severity, a.Name, a.Summary))
		}
		out = append(out, "--")
	}
	return out
}

// SentNames is NoteLines without the summaries: "state severity name".
func SentNames(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l == "--" {
			continue
		}
		f := strings.Fields(l)
		out = append(out, f[0]+" "+f[1]+" "+strings.TrimSuffix(f[2], ":"))
	}
	return out
}

// SameList fails t unless got is want, line by line.
func SameList(t testing.TB, got, want []string) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
