package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/silence"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
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

// openStateBucket is openTestBus and its state bucket.
func openStateBucket(ctx context.Context, t testing.TB) (*bus.Bus, jetstream.KeyValue) {
	t.Helper()
	b := openTestBus(ctx, t)
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	return b, kv
}

// statusPools parses a real zpool status fixture (text or -j).
func statusPools(t testing.TB, file string) []*zfs.Pool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	pools, err := zfs.ParseStatus(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return pools
}

// newSilence is a silence of matchers (as typed on the command line) from
// start to end, covering up to max.
func newSilence(t testing.TB, matchers string, start, end time.Time, max alert.Severity) silence.Silence {
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

// raidz2 is the real TrueNAS raidz2 pool tank; fail marks its first n
// disks UNAVAIL (n = 0: all back ONLINE).
type raidz2 struct {
	pools []*zfs.Pool
}

func newRaidz2(t testing.TB) *raidz2 {
	return &raidz2{pools: statusPools(t, "zpool-status/linux-truenas-raidz2-online-scrubbed-tabs.txt")}
}

func (r *raidz2) fail(n int) []*zfs.Pool {
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

// noteLines renders notifications as one line per alert.
func noteLines(ns []alert.Notification) []string {
	var out []string
	for _, n := range ns {
		for _, a := range n.Alerts {
			out = append(out, fmt.Sprintf("%s %s %s: %s", a.State, a.Severity, a.Name, a.Summary))
		}
		out = append(out, "--")
	}
	return out
}

// sentNames is noteLines without the summaries: "state severity name".
func sentNames(lines []string) []string {
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

func sameList(t *testing.T, got, want []string) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
