package rules

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/units"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/zfs"
)

// k1Time is the guest's clock when step k1 was captured (k1-healthy.date-s.txt).
func k1Time(t testing.TB) time.Time {
	t.Helper()
	b, err := os.ReadFile("../testdata/" + cap232 + "k1-healthy.date-s.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(s, 0).UTC()
}

// The real listing of step k1: snapshots named as sanoid, zfs-auto-
// snapshot, TrueNAS, zrepl and pyznap name them, taken days before the
// capture with the guest clock set back. At the capture's time every
// dataset whose tool's period × 2 + grace has passed is stale; nas/ro's
// sanoid hourly snapshot is an hour old, and nas's only snapshot is a
// manual one (no tool, no config): neither is.
func TestSnapshotStaleOnCapture(t *testing.T) {
	now := k1Time(t)
	snaps := capturedSnapshots(t, "k1-healthy.zfs-list-snapshots.txt")
	e := newTestEngine()
	observe(t, e, snapshotsEnv(t, now, snaps), now)
	sameList(t, active(e, nameSnapshotStale), []string{
		"SnapshotStale warning dataset=nas/My Documents pool=nas",
		"SnapshotStale warning dataset=nas/media pool=nas",
		"SnapshotStale warning dataset=nas/quota pool=nas",
		"SnapshotStale warning dataset=nas/secret pool=nas",
		"SnapshotStale warning dataset=nas/secret/photos pool=nas",
		"SnapshotStale warning dataset=nas/vault pool=nas",
		"SnapshotStale warning dataset=nas/vol pool=nas",
	})
	texts := map[string]string{
		"nas/media":        "sanoid takes hourly snapshots every 1h, so zwatch allows 3h (twice that plus 1h grace)",
		"nas/My Documents": "truenas takes its snapshots every 1d",
		"nas/secret":       "zfs-auto-snapshot takes frequent snapshots every 15m",
		"nas/quota":        "check `zrepl status`",
		"nas/vault":        "pyznap runs from cron",
	}
	for ds, w := range texts {
		if a := findLabel(e, nameSnapshotStale, ds); a == nil || !strings.Contains(a.Description, w) {
			t.Errorf("SnapshotStale %s does not say %q: %+v", ds, w, a)
		}
	}
	// The syncoid snapshot after the last sanoid one does not hide the dead timer.
	if a := findLabel(e, nameSnapshotStale, "nas/media"); !strings.Contains(a.Description, "nas/media@autosnap_2026-11-27_05:00:01_hourly") {
		t.Errorf("judged on another snapshot than sanoid's newest: %s", a.Description)
	}

	// Config first: a 0 max_age leaves a dataset unchecked, a long one keeps it quiet.
	e = newTestEngine(func(c *config.RulesConfig) {
		snapshotsConfig.edit(c, func(s *snapshotSettings) {
			s.MaxAge = []datasetAge{{Dataset: "nas/media", MaxAge: 0}, {Dataset: "nas/*", MaxAge: config.Duration(30 * 24 * time.Hour)},
				{Dataset: "nas/*/*", MaxAge: config.Duration(30 * 24 * time.Hour)}} // * does not cross /
		})
	})
	observe(t, e, snapshotsEnv(t, now, snaps), now)
	sameList(t, active(e, nameSnapshotStale), nil)
}

// SnapshotStale is time-based: with no new listing, the engine's tick
// finds the moment nas/ro's hourly snapshots are overdue.
func TestSnapshotStaleAtTick(t *testing.T) {
	snaps := capturedSnapshots(t, "k1-healthy.zfs-list-snapshots.txt")
	var ro *zfs.SnapshotStats
	for i := range snaps.Datasets {
		if snaps.Datasets[i].Dataset == "nas/ro" {
			ro = &snaps.Datasets[i]
		}
	}
	at := ro.Scheme.Newest.Add(time.Minute)
	e := newTestEngine()
	observe(t, e, snapshotsEnv(t, at, snaps), at)
	if findLabel(e, nameSnapshotStale, "nas/ro") != nil {
		t.Fatal("stale a minute after its newest snapshot")
	}
	var staleAt time.Time
	for d := time.Duration(0); d <= 4*time.Hour && staleAt.IsZero(); d += time.Second {
		e.Tick(at.Add(d))
		if findLabel(e, nameSnapshotStale, "nas/ro") != nil {
			staleAt = at.Add(d)
		}
	}
	overdue := ro.Scheme.Newest.Add(3 * time.Hour)
	if staleAt.Before(overdue) || staleAt.Sub(overdue) > reevalEvery+time.Second {
		t.Errorf("stale at %s, want within %s after %s", staleAt, reevalEvery, overdue)
	}
	// The same listing every 15 min (nothing new: the timer is dead) keeps
	// it stale, and says when it was listed.
	for d := 15 * time.Minute; d <= 12*time.Hour; d += 15 * time.Minute {
		now := staleAt.Add(d)
		observe(t, e, snapshotsEnv(t, now, snaps), now)
		e.Tick(now)
		a := findLabel(e, nameSnapshotStale, "nas/ro")
		if a == nil || a.Evidence["listed_at"] != now.UTC().Format(time.RFC3339) {
			t.Fatalf("%s later with the same listing: %+v", d, a)
		}
	}
}

// Backup targets (k3: backup/media received from nas/media with zfs
// receive -s): the newest received snapshot is days old at the capture's
// time; a target with no snapshot at all is stale too; received sanoid
// names are ReplicationStale's, not SnapshotStale's.
func TestReplicationStaleOnCapture(t *testing.T) {
	now := k1Time(t)
	e := newTestEngine(func(c *config.RulesConfig) {
		replicationConfig.edit(c, func(r *replicationSettings) {
			r.Targets = []datasetAge{{Dataset: "backup/*", MaxAge: config.Duration(26 * time.Hour)}, {Dataset: "offsite", MaxAge: config.Duration(7 * 24 * time.Hour)}}
		})
	})
	observe(t, e, datasetsEnv(t, now, capturedDatasets(t, "k3-interrupted.zfs-list-datasets.txt")...), now)
	if got := active(e, nameReplicationStale); len(got) != 0 {
		t.Fatalf("ReplicationStale before any snapshot listing: %v", got)
	}
	observe(t, e, snapshotsEnv(t, now, capturedSnapshots(t, "k3-interrupted.zfs-list-snapshots.txt")), now)
	sameList(t, active(e, nameReplicationStale), []string{
		"ReplicationStale warning dataset=backup/media pool=backup",
		"ReplicationStale warning dataset=offsite pool=offsite",
	})
	if a := findLabel(e, nameReplicationStale, "backup/media"); !strings.Contains(a.Description, "backup/media@autosnap_2026-11-27_05:00:01_hourly") || !strings.Contains(a.Description, "allows 1d2h") {
		t.Errorf("ReplicationStale text: %s", a.Description)
	}
	if a := findLabel(e, nameReplicationStale, "offsite"); a.Summary != "backup target offsite has no snapshots" {
		t.Errorf("empty target: %s", a.Summary)
	}
	if findLabel(e, nameSnapshotStale, "backup/media") != nil {
		t.Error("a backup target's received sanoid snapshots raised SnapshotStale")
	}
	// k3's backup/media is unmounted by zfs receive -s -u; a target received
	// with -u and no resume token is not DatasetNotMounted either (derived:
	// its row without the token).
	ds := capturedDatasets(t, "k3-interrupted.zfs-list-datasets.txt")
	dataset(t, ds, "backup/media").ReceiveResumeToken = ""
	observe(t, e, datasetsEnv(t, now.Add(time.Minute), ds...), now.Add(time.Minute))
	if findLabel(e, nameDatasetNotMounted, "backup/media") != nil {
		t.Error("a backup target received with -u raised DatasetNotMounted")
	}
}

// SnapshotCount and SnapshotSpace read their thresholds from the config;
// on the real k1 figures (a few snapshots, a few KiB held) they need
// thresholds far below the defaults to speak.
func TestSnapshotCountAndSpaceOnCapture(t *testing.T) {
	now := k1Time(t)
	ds := capturedDatasets(t, "k1-healthy.zfs-list-datasets.txt")
	snaps := capturedSnapshots(t, "k1-healthy.zfs-list-snapshots.txt")
	nasFull := []zfs.PoolList{{Name: "nas", Health: "ONLINE", CapacityPct: 12}}

	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameSnapshotCount, nameSnapshotSpace) })
	observe(t, e, datasetsEnv(t, now, ds...), now)
	observe(t, e, snapshotsEnv(t, now, snaps), now)
	observe(t, e, capEnv(t, nasFull, nil, now), now)
	sameList(t, active(e, nameSnapshotCount, nameSnapshotSpace), nil)

	e = newTestEngine(func(c *config.RulesConfig) {
		c.For = forZero(nameSnapshotCount, nameSnapshotSpace)
		snapshotsConfig.edit(c, func(s *snapshotSettings) { s.MaxCount, s.SpaceShare = 10, 0.01 })
		capacityConfig.edit(c, func(cp *capacitySettings) { cp.Warning = 10 })
	})
	observe(t, e, datasetsEnv(t, now, ds...), now)
	observe(t, e, snapshotsEnv(t, now, snaps), now)
	observe(t, e, capEnv(t, nasFull, nil, now), now)
	sameList(t, active(e, nameSnapshotCount, nameSnapshotSpace), []string{
		"SnapshotCount warning dataset=nas/media pool=nas",
		"SnapshotSpace warning pool=nas",
	})
	a := find(e, nameSnapshotSpace)
	if !strings.Contains(a.Description, "Biggest holders: nas/media 56.0 KiB in 14 snapshots") {
		t.Errorf("SnapshotSpace text: %s", a.Description)
	}
	t.Log(a.Summary)
}

func TestAgeText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second: "30s", 15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Minute: "1h30m",
		24 * time.Hour: "1d", 26 * time.Hour: "1d2h", 111*time.Hour + 38*time.Minute: "4d15h",
	} {
		if got := units.Age(d); got != want {
			t.Errorf("units.Age(%s) = %s, want %s", d, got, want)
		}
	}
}
