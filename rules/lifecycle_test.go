package rules

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
)

// An enclosure dropping six disks within seconds is one notification. The
// pool is the real TrueNAS raidz2; the disks are marked UNAVAIL by hand (no
// real output of that exists).
func TestGroupingOneNotification(t *testing.T) {
	pools := statusPools(t, "zpool-status/linux-truenas-raidz2-online-scrubbed-tabs.txt")
	e := newTestEngine()
	observe(t, e, poolsEnv(t, pools, t0), t0)
	leaves := pools[0].Vdevs[0].Leaves()
	if len(leaves) < 6 {
		t.Skipf("fixture has %d leaves", len(leaves))
	}
	var ns []string
	for i := 0; i < 6; i++ {
		leaves[i].State = "UNAVAIL"
		pools[0].State = "UNAVAIL"
		now := t0.Add(time.Duration(i+1) * time.Second)
		observe(t, e, poolsEnv(t, pools, now), now)
		ns = append(ns, noteLines(e.Tick(now))...)
	}
	for s := 7; s < 60; s++ {
		ns = append(ns, noteLines(e.Tick(t0.Add(time.Duration(s)*time.Second)))...)
	}
	if n := strings.Count(strings.Join(ns, "\n"), "--"); n != 1 {
		t.Fatalf("%d notifications:\n%s", n, strings.Join(ns, "\n"))
	}
	// The pool is UNAVAIL: it carries the six disks; they are not listed apart.
	if !strings.Contains(ns[0], "PoolState") || len(ns) > 4 {
		t.Errorf("%s", strings.Join(ns, "\n"))
	}
}

func TestForAndRepeat(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) {
		c.For = map[string]config.Duration{"VdevState": config.Duration(2 * time.Minute)}
	})
	env := statusEnv(t, "zpool-status/freebsd-raidz2-degraded-faulted-too-many-errors.txt", t0)
	var sent []time.Time
	var vdevSent []time.Time
	for d := time.Duration(0); d <= 50*time.Hour; d += 30 * time.Second {
		now := t0.Add(d)
		if d%time.Minute == 0 {
			observe(t, e, env, now)
		}
		for _, n := range e.Tick(now) {
			sent = append(sent, now)
			for _, a := range n.Alerts {
				if a.Name == nameVdevState {
					vdevSent = append(vdevSent, now)
				}
			}
		}
	}
	// VdevState waits its 2m `for`; its group has been quiet longer than
	// group_wait, so it goes at that tick; then, a warning, it repeats every 24 h.
	first := t0.Add(2 * time.Minute)
	want := []time.Time{first, first.Add(24 * time.Hour), first.Add(48 * time.Hour)}
	if !slices.EqualFunc(vdevSent, want, time.Time.Equal) {
		t.Errorf("VdevState sent at %v, want %v", vdevSent, want)
	}
	t.Logf("notifications at %v", sent)
}

// Names, config's list and the catalogue agree, in the order people know.
func TestNamesMatchConfig(t *testing.T) {
	want := []string{
		namePoolState, namePoolSuspended, namePoolMissing, nameDiskVanished, nameZFSVersionMismatch, namePoolStatusMessage, nameVdevState, nameRedundancy,
		nameVdevErrors, nameVdevErrorRate, namePoolDataErrors,
		nameSlowIO, nameIOHung,
		namePoolCapacity, nameDatasetQuota, namePoolFullForecast,
		nameDatasetLocked, nameDatasetNotMounted, nameKeyFileProblem,
		nameSnapshotStale, nameSnapshotCount, nameSnapshotSpace, nameReplicationStale, nameReplicationInterrupted,
		nameScrubNever, nameScrubOverdue, nameScrubErrors, nameScrubPaused,
		nameResilver, nameResilverAtRisk,
		nameSmartFailed, nameSmartAttribute, nameSmartCRC, nameSmartTemperature,
		nameSmartSelfTest, nameSCSIGrownDefects, nameNVMeCriticalWarning,
		nameNVMeMediaErrors, nameNVMeSpare, nameNVMeWearout,
		nameKernelDiskErrors, nameLinkResets,
		nameDiskIncident,
		nameARCThrottle, nameARCHitRatio,
		nameCollectorStale, nameHostSilent, nameCommandHangs, nameBlindSpot,
	}
	cat := config.Catalog{Rules: AlertNames(Catalogue())}
	if !slices.Equal(want, Names()) || !slices.Equal(want, cat.Rules) {
		t.Errorf("want %v\nnames %v\nconfig %v", want, Names(), cat.Rules)
	}
}

func TestDisabledRule(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.Disabled = []string{"PoolState"} })
	observe(t, e, statusEnv(t, "zpool-status/freebsd-raidz1-degraded-removed.txt", t0), t0)
	if find(e, namePoolState) != nil {
		t.Error("disabled rule fired")
	}
}

func TestEvalAndRender(t *testing.T) {
	d := "../testdata/zpool-status/"
	files := []string{d + "freebsd-raidz1-gpt-label-online.txt", d + "freebsd-raidz1-guid-unavail-was-dev.txt",
		d + "freebsd-raidz1-replacing-guid-was-dev-resilvering.txt", "../testdata/zpool-list/linux-issue-si-802-list-vHPp.txt",
		"../testdata/smartctl/nvme-samsung-970evo-media-errors.json"}
	as, err := evalAt(files, config.DefaultRules(), t0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, a.Name+" "+string(a.State))
	}
	slices.Sort(got)
	sameList(t, got, []string{"NVMeMediaErrors firing", "PoolState firing", "RedundancyMargin firing", "Resilver firing", "VdevState firing"})

	// The last file resolves what the one before raised.
	as, err = evalAt([]string{d + "freebsd-raidz1-guid-unavail-was-dev.txt", d + "freebsd-raidz1-gpt-label-online.txt"}, config.DefaultRules(), t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		// That healthy output has no scan line: after ScrubNever's 24 h `for`, it fires.
		if a.State != "resolved" && a.Name != nameScrubNever {
			t.Errorf("%s %s", a.Name, a.State)
		}
	}
	var table, js bytes.Buffer
	if err := RenderAlerts(&table, as); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(table.String(), "SEVERITY") || !strings.Contains(table.String(), "gpt/usb2") {
		t.Errorf("table:\n%s", table.String())
	}
	if err := RenderAlertsJSON(&js, as); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Alerts []map[string]any `json:"alerts"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Alerts) != len(as) {
		t.Fatalf("%v %s", err, js.String())
	}
	for _, k := range []string{"name", "severity", "state", "labels", "summary", "description"} {
		if _, ok := doc.Alerts[0][k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if _, err := evalAt([]string{"../testdata/smartctl/SOURCES.md"}, config.DefaultRules(), t0); err == nil {
		t.Error("a markdown file was accepted")
	}
}
