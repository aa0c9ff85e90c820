package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
)

// datasetsEnv wraps datasets as the datasets collector sends them.
func datasetsEnv(t testing.TB, at time.Time, ds ...facts.DatasetState) bus.Envelope {
	return envOf(t, facts.Datasets.Name(), "datasets", at, facts.DatasetsData{Datasets: ds})
}

func capEnv(t testing.TB, pools []zfs.PoolList, ds []zfs.Dataset, at time.Time) bus.Envelope {
	return envOf(t, facts.ZpoolCapacity.Name(), "zpool_list", at, facts.CapacityData{Pools: pools, Datasets: ds})
}

// The real `zpool list -Hp` output (pool_0 at 39 %) raises nothing.
func TestCapacityRealList(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "zpool-list", "linux-issue-si-802-list-vHPp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pl, err := zfs.ParseList(f)
	if err != nil || len(pl) == 0 {
		t.Fatalf("%v %v", pl, err)
	}
	e := newTestEngine()
	observe(t, e, capEnv(t, pl, nil, t0), t0)
	sameList(t, active(e), nil)
}

// No real series of one pool filling up exists: the percentages are made
// by hand. Levels hold until hysteresis (3 points) below them.
func TestPoolCapacityHysteresis(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = map[string]config.Duration{"PoolCapacity": 0} })
	steps := []struct {
		pct  float64
		want []string
	}{
		{79, nil},
		{80, []string{"PoolCapacity warning pool=tank"}},
		{78, []string{"PoolCapacity warning pool=tank"}}, // within hysteresis
		{90.5, []string{"PoolCapacity critical pool=tank"}},
		{88, []string{"PoolCapacity critical pool=tank"}},
		{86.9, []string{"PoolCapacity warning pool=tank"}},
		{76.9, nil},
	}
	for i, s := range steps {
		now := t0.Add(time.Duration(i) * time.Minute)
		observe(t, e, capEnv(t, []zfs.PoolList{{Name: "tank", Health: "ONLINE", CapacityPct: s.pct}}, nil, now), now)
		sameList(t, active(e, namePoolCapacity), s.want)
	}
}

func TestDatasetQuota(t *testing.T) {
	const g = 1 << 30
	cases := []struct {
		ds   zfs.Dataset
		want []string
	}{
		{zfs.Dataset{Name: "tank/home", UsedBytes: 50 * g, AvailBytes: 50 * g, QuotaBytes: 100 * g}, nil},
		{zfs.Dataset{Name: "tank/home", UsedBytes: 91 * g, AvailBytes: 9 * g, QuotaBytes: 100 * g}, []string{"DatasetQuota warning dataset=tank/home pool=tank"}},
		{zfs.Dataset{Name: "tank/vm", UsedBytes: 99 * g, AvailBytes: 1 * g, RefquotaBytes: 100 * g}, []string{"DatasetQuota critical dataset=tank/vm pool=tank"}},
		{zfs.Dataset{Name: "tank/free", UsedBytes: 99 * g, AvailBytes: 1 * g}, nil}, // no quota
	}
	for _, tc := range cases {
		e := newTestEngine(func(c *config.RulesConfig) { c.For = map[string]config.Duration{"DatasetQuota": 0} })
		observe(t, e, datasetsEnv(t, t0, facts.DatasetState{DatasetProps: zfs.DatasetProps{Dataset: tc.ds}}), t0)
		sameList(t, active(e, nameDatasetQuota), tc.want)
	}
}

// A pool growing 2 points a day from 60 %: full in 20 days, so a warning
// once it is within 14 days (≤ 72 %) and critical within 3 (≥ 94 %).
func TestFullForecast(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) {
		c.For = map[string]config.Duration{"PoolFullForecast": 0, "PoolCapacity": 0}
	})
	var got []string
	for h := 0; h <= 17*24; h += 3 {
		now := t0.Add(time.Duration(h) * time.Hour)
		pct := 60 + 2*float64(h)/24
		observe(t, e, capEnv(t, []zfs.PoolList{{Name: "tank", CapacityPct: pct}}, nil, now), now)
		if a := find(e, namePoolFullForecast); a != nil && (len(got) == 0 || got[len(got)-1] != string(a.Severity)) {
			got = append(got, string(a.Severity))
			t.Logf("day %.1f at %.0f%%: %s", float64(h)/24, pct, a.Summary)
		}
	}
	sameList(t, got, []string{"warning", "critical"})
	if n := len(forecastMemory.peek(e.hosts[testHost]).pools()["tank"]); n > maxCapSamples {
		t.Errorf("history not bounded: %d", n)
	}
	// Flat usage forecasts nothing.
	e = newTestEngine(func(c *config.RulesConfig) { c.For = map[string]config.Duration{"PoolFullForecast": 0} })
	for h := 0; h <= 72; h += 3 {
		now := t0.Add(time.Duration(h) * time.Hour)
		observe(t, e, capEnv(t, []zfs.PoolList{{Name: "tank", CapacityPct: 50}}, nil, now), now)
	}
	sameList(t, active(e), nil)
}

// TestFullPoolByDatasetSpace uses a real OpenZFS 2.3.2 capture of a small
// pool written until ENOSPC: zpool list says 50 % (raw space, and ZFS keeps
// at least 128 MiB of slop free) while zfs list shows 0 bytes available.
// The pool is full.
func TestFullPoolByDatasetSpace(t *testing.T) {
	const base = "../testdata/zpool-list/zfs-2.3.2-qemu-small-pool-full-at-slop."
	alerts, err := Eval([]string{base + "zpool-list-Hp.txt", base + "zfs-list-Hp.txt"}, config.DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range alerts {
		got = append(got, fmt.Sprintf("%s %s %s %s", a.Name, a.Severity, a.Labels["pool"], a.Summary))
	}
	if len(got) != 1 || got[0] != "PoolCapacity critical small pool small is 100% full" {
		t.Fatalf("alerts %q", got)
	}
	// zpool list alone (no dataset view) cannot see it: the reason for the join.
	alerts, _ = Eval([]string{base + "zpool-list-Hp.txt"}, config.DefaultRules())
	if len(alerts) != 0 {
		t.Fatalf("zpool list alone: %+v", alerts)
	}
}
