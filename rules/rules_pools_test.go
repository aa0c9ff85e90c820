package rules

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

const cap232 = "captured/zfs-2.3.2/"

// capturedList parses a real zpool list -Hp capture.
func capturedList(t testing.TB, file string) []zfs.PoolList {
	t.Helper()
	return parseTestdata(t, filepath.Join(cap232, file), zfs.ParseList)
}

// capturedImport parses a real zpool import capture.
func capturedImport(t testing.TB, file string) []zfs.ImportablePool {
	t.Helper()
	return parseTestdata(t, file, zfs.ParseImport)
}

func importEnv(t testing.TB, at time.Time, d facts.PoolImportData) bus.Envelope {
	return envOf(t, facts.PoolImport.Name(), "zpool_import", at, d)
}

func forgetEnv(t testing.TB, pool string, at time.Time) bus.Envelope {
	return envOf(t, facts.PoolForget.Name(), "", at, facts.PoolForgetData{Pool: pool, By: "root"})
}

// without drops one pool from a listing: what zpool status and zpool list
// print once it is exported (the captures of step c have no status or
// list between the export and the import, so the b1 ones are cut).
func without[T any](list []T, name func(T) string, pool string) []T {
	return slices.DeleteFunc(slices.Clone(list), func(x T) bool { return name(x) == pool })
}

// exportVault plays the DEGRADED export of the real captures: vault
// DEGRADED (b1-offline: a disk offlined), paged; exported, with zpool
// import's real report of it (c2-exported). It returns the notifications
// from the export on and the time after it.
func exportVault(t *testing.T, e *Engine) ([]alert.Notification, time.Time) {
	t.Helper()
	b1 := statusPools(t, cap232+"b1-offline.zpool-status.txt")
	b1list := capturedList(t, "b1-offline.zpool-list-Hp.txt")
	observe(t, e, poolsEnv(t, b1, t0), t0)
	observe(t, e, capEnv(t, b1list, nil, t0), t0)
	var before []alert.Notification
	for d := time.Duration(0); d <= 3*time.Minute; d += time.Second {
		before = append(before, e.Tick(t0.Add(d))...)
	}
	if !slices.Contains(noteLines(before), "firing warning PoolState: pool vault is DEGRADED: virtio-ZWV0001 OFFLINE") {
		t.Fatalf("the DEGRADED pool was not paged first: %q", noteLines(before))
	}
	at := t0.Add(4 * time.Minute)
	byName := func(p *zfs.Pool) string { return p.Name }
	observe(t, e, poolsEnv(t, without(b1, byName, "vault"), at), at)
	observe(t, e, capEnv(t, without(b1list, func(p zfs.PoolList) string { return p.Name }, "vault"), nil, at), at)
	observe(t, e, importEnv(t, at, facts.PoolImportData{Imported: []string{"fast"}, Found: capturedImport(t, cap232+"c2-exported.zpool-import.txt")}), at)
	var out []alert.Notification
	for d := time.Duration(0); d <= 10*time.Minute; d += time.Second {
		out = append(out, e.Tick(at.Add(d))...)
	}
	return out, at.Add(10 * time.Minute)
}

// Exporting a DEGRADED pool sent "[RESOLVED] pool vault is DEGRADED"
// before: a false all-clear. Now its alerts stay, marked, PoolMissing
// pages with what zpool import says and the command, and once the pool is
// imported again (c3-imported, still DEGRADED) evaluation resumes: the
// PoolState alert simply continues and PoolMissing resolves.
func TestExportedDegradedPoolKeepsItsAlerts(t *testing.T) {
	e := newTestEngine()
	got, now := exportVault(t, e)
	for _, l := range noteLines(got) {
		if strings.HasPrefix(l, "resolved") {
			t.Errorf("the export resolved an alert: %s", l)
		}
	}
	sameList(t, noteLines(got), []string{"firing critical PoolMissing: pool vault is not imported: zpool import finds it DEGRADED, 1 device(s) not ONLINE", "--"})
	m := find(e, namePoolMissing)
	for _, want := range []string{"id 4831632425058079330", "1 of 6 devices not ONLINE (scsi-35000c500a0000001)",
		"`zpool import -d /dev/disk/by-id vault`", "zwatch forget-pool vault", "rules.pools.exported", "action: The pool can be imported despite missing"} {
		if !strings.Contains(m.Description, want) {
			t.Errorf("PoolMissing does not say %q:\n%s", want, m.Description)
		}
	}
	ps := find(e, namePoolState)
	if ps == nil || ps.State != alert.Firing || !strings.HasSuffix(ps.Summary, "(pool not imported)") || ps.Evidence["pool_imported"] != "no" {
		t.Fatalf("PoolState of the exported pool: %+v", ps)
	}

	observe(t, e, statusEnv(t, cap232+"c3-imported.zpool-status.txt", now), now)
	observe(t, e, capEnv(t, capturedList(t, "c3-imported.zpool-list-Hp.txt"), nil, now), now)
	var back []string
	for d := time.Duration(0); d <= time.Minute; d += time.Second {
		back = append(back, noteLines(e.Tick(now.Add(d)))...)
	}
	if !slices.Contains(back, "resolved critical PoolMissing: pool vault is not imported: zpool import finds it DEGRADED, 1 device(s) not ONLINE") {
		t.Errorf("PoolMissing not resolved after the import: %q", back)
	}
	for _, l := range back {
		if strings.Contains(l, "PoolState") {
			t.Errorf("PoolState of the still DEGRADED pool was notified again: %s", l)
		}
	}
	ps = find(e, namePoolState)
	if ps == nil || strings.Contains(ps.Summary, "not imported") || ps.Evidence["pool_imported"] != "" {
		t.Errorf("PoolState after the import: %+v", ps)
	}
	t.Logf("after the import: %q", back)
}

// The owner says the pool is gone for good: its PoolMissing and the
// alerts it kept resolve, and it stays forgotten while it is away.
func TestForgottenPoolResolvesItsAlerts(t *testing.T) {
	e := newTestEngine()
	_, now := exportVault(t, e)
	observe(t, e, forgetEnv(t, "vault", now), now)
	var got []string
	for d := time.Duration(0); d <= time.Hour; d += 15 * time.Second {
		got = append(got, noteLines(e.Tick(now.Add(d)))...)
	}
	for _, name := range []string{"PoolMissing", "PoolState", "VdevState"} {
		if !slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, "resolved") && strings.Contains(l, name) }) {
			t.Errorf("%s not resolved after forget-pool: %q", name, got)
		}
	}
	if a := active(e); slices.ContainsFunc(a, func(s string) bool { return strings.Contains(s, "pool=vault") }) {
		t.Errorf("alerts of the forgotten pool: %v", a)
	}
	if e.hosts[testHost].KnownPools["vault"] != nil {
		t.Error("vault still known")
	}
}

// A pool exported on purpose (rules.pools.exported) keeps nothing: its
// alerts resolve as they did, and its absence raises nothing.
func TestPoolExportedOnPurpose(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) {
		poolsConfig.edit(c, func(p *poolSettings) { p.Exported = []string{"va*"} })
	})
	got, _ := exportVault(t, e)
	lines := noteLines(got)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "resolved warning PoolState: pool vault") }) {
		t.Errorf("PoolState of a pool exported on purpose did not resolve: %q", lines)
	}
	if find(e, namePoolMissing) != nil {
		t.Error("PoolMissing for a pool exported on purpose")
	}
}

// A pool the cache file lists that did not import (k7: offsite exported,
// the cache file from before the export kept as a boot that did not
// import it would see it) is missing though zwatch never saw it: a
// warning while zpool import finds it ONLINE, critical with a disk gone,
// and still missing once zpool import finds neither disk.
func TestCachedPoolThatDidNotImport(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(namePoolMissing) })
	imported := []zfs.PoolList{{Name: "backup", Health: "ONLINE"}, {Name: "nas", Health: "ONLINE"}} // k7-exported.zpool-list-H-o-name.txt
	steps := []struct{ found, cached, want string }{
		{"k7-exported.zpool-import.txt", "k7-exported.zpool-import-c-before-export.txt", "PoolMissing warning pool=offsite"},
		{"k7-missing.zpool-import.txt", "k7-missing.zpool-import-c-before-export.txt", "PoolMissing critical pool=offsite"},
		{"k7-both-missing.zpool-import.txt", "k7-both-missing.zpool-import-c-before-export.txt", "PoolMissing critical pool=offsite"},
	}
	for i, s := range steps {
		now := t0.Add(time.Duration(i) * time.Minute)
		observe(t, e, capEnv(t, imported, nil, now), now)
		d := facts.PoolImportData{Imported: []string{"backup", "nas"}, CacheFile: "/root/zpool.cache.boot",
			Found: capturedImport(t, cap232+s.found), Cached: capturedImport(t, cap232+s.cached)}
		if i == 2 { // zpool import -c exited 1 (k7-both-missing.zpool-import-c-before-export.txt.stderr)
			d.CacheError = "zpool import -c /root/zpool.cache.boot exited 1: cannot import '(null)': no such pool available"
		}
		observe(t, e, importEnv(t, now, d), now)
		sameList(t, active(e, namePoolMissing), []string{s.want})
		t.Logf("%s: %s", s.found, find(e, namePoolMissing).Description)
	}
	if d := find(e, namePoolMissing).Description; !strings.Contains(d, "does not find its disks: attach them") || !strings.Contains(d, "/root/zpool.cache.boot") ||
		!strings.Contains(d, "no such pool available") {
		t.Errorf("both disks gone: %s", d)
	}
	// Back: imported, it is no longer missing.
	now := t0.Add(time.Hour)
	observe(t, e, capEnv(t, append(imported, zfs.PoolList{Name: "offsite", Health: "ONLINE"}), nil, now), now)
	sameList(t, active(e, namePoolMissing), nil)
}

// KnownPools stays bounded however many pools come and go.
func TestKnownPoolsBounded(t *testing.T) {
	e := newTestEngine()
	for i := 0; i < 3*maxKnownPools; i++ {
		now := t0.Add(time.Duration(i) * 2 * time.Hour)
		observe(t, e, capEnv(t, []zfs.PoolList{{Name: "p" + itoa(uint64(i)), Health: "ONLINE"}}, nil, now), now)
	}
	if n := len(e.hosts[testHost].KnownPools); n != maxKnownPools {
		t.Errorf("%d known pools, want %d", n, maxKnownPools)
	}
}

// A restart while the pool is away forgets nothing: it is still known, its
// alerts still kept, and the first facts after the restart resolve none.
func TestMissingPoolSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	kv, err := openTestBus(ctx, t).JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	old := newTestEngine()
	_, now := exportVault(t, old)
	if err := old.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}
	e := newTestEngine()
	if err := e.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	fast := without(statusPools(t, cap232+"b1-offline.zpool-status.txt"), func(p *zfs.Pool) string { return p.Name }, "vault")
	observe(t, e, poolsEnv(t, fast, now), now)
	observe(t, e, capEnv(t, without(capturedList(t, "b1-offline.zpool-list-Hp.txt"), func(p zfs.PoolList) string { return p.Name }, "vault"), nil, now), now)
	for _, l := range tickFor(e, now, 5*time.Minute) {
		if strings.HasPrefix(l, "resolved") {
			t.Errorf("after the restart: %s", l)
		}
	}
	if ps := find(e, namePoolState); ps == nil || !strings.HasSuffix(ps.Summary, keptMark) {
		t.Errorf("PoolState after the restart: %+v", ps)
	}
	if find(e, namePoolMissing) == nil {
		t.Error("PoolMissing ended with the restart")
	}
}

// The datasets of a pool that is exported leave zfs list with it: its
// locked dataset stays firing, marked, instead of a "[RESOLVED] locked".
// Pool lists are the names of k7 (backup, nas, offsite); the listing after
// the export is k4-locked's without nas's rows.
func TestDatasetAlertsKeptWhilePoolAway(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameDatasetLocked, namePoolMissing) })
	all := []zfs.PoolList{{Name: "backup", Health: "ONLINE"}, {Name: "nas", Health: "ONLINE"}, {Name: "offsite", Health: "ONLINE"}}
	locked := capturedDatasets(t, "k4-locked.zfs-list-datasets.txt")
	observe(t, e, capEnv(t, all, nil, t0), t0)
	observe(t, e, datasetsEnv(t, t0, locked...), t0)
	tickFor(e, t0, time.Minute)
	now := t0.Add(2 * time.Minute)
	observe(t, e, capEnv(t, without(all, func(p zfs.PoolList) string { return p.Name }, "nas"), nil, now), now)
	observe(t, e, datasetsEnv(t, now, without(locked, func(d facts.DatasetState) string { return poolOfDataset(d.Name) }, "nas")...), now)
	away := tickFor(e, now, 10*time.Minute)
	for _, l := range away {
		if strings.HasPrefix(l, "resolved") {
			t.Errorf("while nas is away: %s", l)
		}
	}
	if a := findLabel(e, nameDatasetLocked, "nas/secret"); a == nil || !strings.HasSuffix(a.Summary, keptMark) {
		t.Errorf("DatasetLocked of the exported pool: %+v", a)
	}
	if find(e, namePoolMissing) == nil {
		t.Error("no PoolMissing for nas")
	}
	now = now.Add(time.Hour)
	observe(t, e, capEnv(t, all, nil, now), now)
	observe(t, e, datasetsEnv(t, now, capturedDatasets(t, "k4-unlocked.zfs-list-datasets.txt")...), now)
	back := tickFor(e, now, time.Minute)
	if !slices.Contains(back, "resolved critical DatasetLocked: dataset nas/secret is locked: its key is not loaded, 2 filesystem(s) not mounted") {
		t.Errorf("back and unlocked: %q", back)
	}
}

// A pool imported under a new name (zpool import vault archive) is the
// same pool, known by its GUID (zpool status -j): the old name is not
// missing. The renamed status is the real a-step one with vault renamed.
func TestRenamedPoolIsNotMissing(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(namePoolMissing) })
	pools := statusPools(t, cap232+"a.zpool-status-j.json")
	observe(t, e, poolsEnv(t, pools, t0), t0)
	renamed := statusPools(t, cap232+"a.zpool-status-j.json")
	for _, p := range renamed {
		if p.Name == "vault" {
			p.Name = "archive"
		}
	}
	observe(t, e, poolsEnv(t, renamed, t0.Add(time.Minute)), t0.Add(time.Minute))
	sameList(t, active(e, namePoolMissing), nil)
	if k := e.hosts[testHost].KnownPools; k["vault"] != nil || k["archive"] == nil || k["archive"].GUID != "4831632425058079330" {
		t.Errorf("known pools %v", k)
	}
}

// zpool destroy is the owner's own act (capture m1: pool 'gone' destroyed,
// ZFS posts sysevent.fs.zfs.pool_destroy): the pool is forgotten, so it is
// not paged as missing once it leaves zpool list. Without the event, the
// same disappearance is PoolMissing.
func TestDestroyedPoolIsNotMissing(t *testing.T) {
	for _, destroyed := range []bool{true, false} {
		e := newTestEngine()
		pools := []zfs.PoolList{{Name: "backup", Health: "ONLINE"}, {Name: "gone", Health: "ONLINE"}}
		observe(t, e, capEnv(t, pools, nil, t0), t0)
		now := t0.Add(time.Hour)
		if destroyed {
			for _, ev := range capturedEvents(t, "m1-destroyed.zpool-events-v.txt") {
				observe(t, e, eventEnv(t, ev, now), now)
			}
		}
		observe(t, e, capEnv(t, pools[:1], nil, now), now)
		tickFor(e, now, 10*time.Minute)
		missing := find(e, namePoolMissing)
		if destroyed && missing != nil {
			t.Errorf("a destroyed pool is paged as missing: %s", missing.Summary)
		}
		if !destroyed && missing == nil {
			t.Error("a pool gone without a destroy event is not missing")
		}
		if k := e.hosts[testHost].KnownPools; destroyed == (k["gone"] != nil) {
			t.Errorf("destroyed %v: known pools %v", destroyed, k)
		}
	}
}

// A destroy event of another pool that had the same name (its GUID
// differs) forgets nothing.
func TestDestroyOfAnOlderPoolOfTheSameName(t *testing.T) {
	e := newTestEngine()
	observe(t, e, poolsEnv(t, statusPools(t, cap232+"a.zpool-status-j.json"), t0), t0)
	for _, ev := range capturedEvents(t, "m1-destroyed.zpool-events-v.txt") {
		ev.Pool = "vault" // DERIVED: capture m1's event, renamed; its GUID is not vault's
		observe(t, e, eventEnv(t, ev, t0), t0)
	}
	if e.hosts[testHost].KnownPools["vault"] == nil {
		t.Error("vault forgotten on the destroy event of another pool")
	}
}

// The e2e's kslow (2026-12-07): zpool destroy at 12:23:29, then a zpool
// list that had started before it ended at 12:23:31 still listing the
// pool, then one without it. The stale listing must not bring the pool
// back (it was paged missing at once with PoolMissing's for at 0s). A
// pool listed again a minute after the destroy is a new one, and known.
func TestStaleListingAfterADestroy(t *testing.T) {
	e := newTestEngine()
	pools := []zfs.PoolList{{Name: "backup", Health: "ONLINE"}, {Name: "gone", Health: "ONLINE"}}
	observe(t, e, capEnv(t, pools, nil, t0), t0)
	now := t0.Add(time.Hour)
	for _, ev := range capturedEvents(t, "m1-destroyed.zpool-events-v.txt") {
		observe(t, e, eventEnv(t, ev, now), now)
	}
	stale := now.Add(2 * time.Second)
	observe(t, e, capEnv(t, pools, nil, stale), stale) // read before the destroy, judged after
	if k := e.hosts[testHost].KnownPools; k["gone"] != nil {
		t.Fatalf("a listing read before the destroy brought the pool back: %v", k)
	}
	if c := e.hosts[testHost].capacity; c == nil || len(c.pools) != 1 {
		t.Errorf("the stale listing's destroyed pool is judged: %+v", c)
	}
	after := now.Add(6 * time.Second)
	observe(t, e, capEnv(t, pools[:1], nil, after), after)
	tickFor(e, after, 10*time.Minute)
	if missing := find(e, namePoolMissing); missing != nil {
		t.Errorf("the destroyed pool is paged as missing: %s", missing.Summary)
	}
	again := now.Add(2 * time.Minute)
	observe(t, e, capEnv(t, pools, nil, again), again)
	if e.hosts[testHost].KnownPools["gone"] == nil {
		t.Error("a pool of that name listed two minutes after the destroy is not known")
	}
}
