package rules

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

const kstatDir = "../testdata/kstat/zfs-2.3.2/"

// kstatEnv reads a captured kstat directory (one state file per pool) into
// the fact the pool_kstat collector publishes.
func kstatEnv(t *testing.T, capture string, at time.Time) bus.Envelope {
	t.Helper()
	entries, err := os.ReadDir(kstatDir + capture)
	if err != nil {
		t.Fatal(err)
	}
	d := facts.PoolKstatData{Source: "procfs", Pools: []facts.PoolKstatState{}}
	for _, e := range entries {
		b, err := os.ReadFile(kstatDir + capture + "/" + e.Name() + "/state")
		if err != nil {
			t.Fatal(err)
		}
		d.Pools = append(d.Pools, facts.PoolKstatState{Name: e.Name(), State: strings.TrimSpace(string(b))})
	}
	return envOf(t, facts.PoolKstat.Name(), "pool_kstat", at, d)
}

func capturedStatusEnv(t *testing.T, file string, at time.Time) bus.Envelope {
	t.Helper()
	b, err := os.ReadFile(kstatDir + file)
	if err != nil {
		t.Fatal(err)
	}
	pools, err := zfs.ParseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	return envOf(t, facts.ZpoolStatus.Name(), "zpool_status", at, facts.StatusData{Source: "json", Pools: pools})
}

func timeoutEnv(t *testing.T, coll, kind, target string, at time.Time) bus.Envelope {
	return envOf(t, facts.CollectorError.Name(), coll, at, facts.CollectorErrorData{Collector: coll, Kind: kind, Target: target,
		Command: "zpool status -j --json-int -p -P", Message: "no answer within 30s; killed"})
}

// The kernel says SUSPENDED: one critical page at once, naming the pool
// and the fix, while zpool itself says nothing yet.
func TestKstatSuspendedPagesAtOnce(t *testing.T) {
	e := newTestEngine()
	observe(t, e, kstatEnv(t, "online", t0), t0)
	sameList(t, active(e), nil)
	now := t0.Add(10 * time.Second)
	observe(t, e, kstatEnv(t, "suspended", now), now)
	a := find(e, namePoolSuspended)
	if a == nil || a.State != alert.Firing || a.Severity != alert.Critical {
		t.Fatalf("PoolSuspended %+v, want critical and firing at once", a)
	}
	for _, want := range []string{"pool hung is SUSPENDED", "zpool clear hung", "zpool status -v hung", "Reconnect the device"} {
		if !strings.Contains(a.Summary+" "+a.Description, want) {
			t.Errorf("PoolSuspended does not say %q: %s / %s", want, a.Summary, a.Description)
		}
	}
	ns := e.Tick(now)
	if got := noteLines(ns); len(got) != 2 || !strings.Contains(got[0], "firing critical PoolSuspended: pool hung is SUSPENDED") {
		t.Errorf("notifications %q", got)
	}
	// The DEGRADED tank in the same reading is zpool status's to judge.
	sameList(t, active(e), []string{"PoolSuspended critical pool=hung"})
}

// The real zpool status of the suspended pool (115 data errors, write
// errors on the pulled disk) pages once: PoolSuspended carries the data
// errors, the device errors and PoolState, and its text is the one to act on.
func TestSuspendedPoolFoldsItsAlerts(t *testing.T) {
	e := newTestEngine()
	observe(t, e, kstatEnv(t, "suspended", t0), t0)
	observe(t, e, capturedStatusEnv(t, "suspended.zpool-status-j.json", t0), t0)
	var notified []string
	for _, n := range e.Tick(t0.Add(time.Second)) {
		for _, a := range n.Alerts {
			if a.Labels["pool"] != "tank" { // the other pool of the capture: an offlined mirror side
				notified = append(notified, a.Name+" "+a.Labels["pool"])
			}
		}
	}
	if strings.Join(notified, ",") != "PoolSuspended hung" {
		t.Errorf("notified %v, want PoolSuspended hung only (its data errors and devices folded in)", notified)
	}
	if a := find(e, namePoolDataErrors); a == nil {
		t.Error("the data errors are not tracked under the page at all")
	}
	a := find(e, namePoolSuspended)
	if a == nil || !strings.Contains(a.Summary, "scsi-35000c500a0000001-part1") || a.Evidence["source"] != "kstat" {
		t.Errorf("PoolSuspended %+v, want the pulled disk named", a)
	}
	// The kernel says ONLINE again (zpool clear after reconnecting), but the
	// last zpool status, from before, still says SUSPENDED: the page stays
	// until status agrees, so PoolState SUSPENDED, which it carries, never
	// pages on its own; then both end together, with one resolved notice.
	now := t0.Add(time.Minute)
	observe(t, e, kstatEnv(t, "online", now), now)
	if find(e, namePoolSuspended) == nil {
		t.Fatal("PoolSuspended ended while zpool status still says SUSPENDED")
	}
	if ns := noteLines(e.Tick(now)); len(ns) != 0 {
		t.Errorf("notifications while the sources disagree: %q", ns)
	}
	now = now.Add(5 * time.Second)
	// No capture of hung after the clear exists: in the captured status a
	// real ONLINE pool (the FreeBSD upool's, renamed hung) takes its place,
	// tank stays as captured. A status without them would say they are not
	// imported, which keeps their alerts.
	back := statusPools(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt")[0]
	back.Name = "hung"
	pools := statusPools(t, "kstat/zfs-2.3.2/suspended.zpool-status-j.json")
	for i, p := range pools {
		if p.Name == "hung" {
			pools[i] = back
		}
	}
	observe(t, e, poolsEnv(t, pools, now), now)
	if find(e, namePoolSuspended) != nil || slices.ContainsFunc(active(e, namePoolState), func(a string) bool { return strings.Contains(a, "pool=hung") }) {
		t.Errorf("PoolSuspended or PoolState still active once kstat and status say the pool is back: %v", active(e))
	}
	var after []string
	for _, n := range e.Tick(now.Add(time.Second)) {
		for _, a := range n.Alerts {
			if a.Labels["pool"] == "hung" {
				after = append(after, string(a.State)+" "+a.Name)
			}
		}
	}
	if strings.Join(after, ",") != "resolved PoolSuspended" {
		t.Errorf("after the recovery %v, want one resolved PoolSuspended", after)
	}
}

// Without a kstat (FreeBSD before the sysctl, an agent's older zwatch),
// zpool status or zpool list saying SUSPENDED raises the same alert.
func TestSuspendedFromZpoolAlone(t *testing.T) {
	e := newTestEngine()
	observe(t, e, capturedStatusEnv(t, "suspended.zpool-status-j.json", t0), t0)
	if a := find(e, namePoolSuspended); a == nil || a.Evidence["source"] != "zpool status" {
		t.Errorf("from zpool status: %+v", a)
	}
	e2 := newTestEngine()
	b, err := os.ReadFile(kstatDir + "suspended.zpool-list-Hp.txt")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := zfs.ParseList(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	observe(t, e2, envOf(t, facts.ZpoolCapacity.Name(), "zpool_list", t0, facts.CapacityData{Pools: pl}), t0)
	if a := find(e2, namePoolSuspended); a == nil || a.Evidence["source"] != "zpool list" {
		t.Errorf("from zpool list: %+v", a)
	}
}

// The first timeout of zpool status pages when the kstat confirms it; the
// hung zpool is then folded under PoolSuspended.
func TestFirstTimeoutConfirmedByKstat(t *testing.T) {
	e := newTestEngine()
	observe(t, e, timeoutEnv(t, "zpool_status", "timeout", "", t0), t0)
	if find(e, nameCommandHangs) != nil {
		t.Fatal("one unconfirmed timeout paged: a slow zpool is no hang")
	}
	observe(t, e, kstatEnv(t, "suspended", t0.Add(time.Second)), t0.Add(time.Second))
	a := find(e, nameCommandHangs)
	if a == nil || a.State != alert.Firing || !strings.Contains(a.Description, "SUSPENDED") {
		t.Fatalf("CommandHangs %+v, want firing on the first timeout once the kstat says SUSPENDED", a)
	}
	ns := noteLines(e.Tick(t0.Add(2 * time.Second)))
	if len(ns) != 2 || !strings.Contains(ns[0], "PoolSuspended") {
		t.Errorf("notifications %q, want PoolSuspended alone (the hung zpool folded in)", ns)
	}
}

// A retry that finds the killed zpool still running (busy: stuck in the
// kernel) confirms the hang without the kstat; so does a second zpool
// command timing out.
func TestFirstTimeoutConfirmedByRetry(t *testing.T) {
	e := newTestEngine()
	observe(t, e, timeoutEnv(t, "zpool_status", "timeout", "", t0), t0)
	observe(t, e, timeoutEnv(t, "zpool_status", "busy", "", t0.Add(time.Second)), t0.Add(time.Second))
	if a := find(e, nameCommandHangs); a == nil || !strings.Contains(a.Description, "stuck in the kernel") {
		t.Errorf("busy retry: %+v", a)
	}
	e2 := newTestEngine()
	observe(t, e2, timeoutEnv(t, "zpool_status", "timeout", "", t0), t0)
	observe(t, e2, timeoutEnv(t, "zpool_list", "timeout", "", t0.Add(time.Second)), t0.Add(time.Second))
	sameList(t, active(e2, nameCommandHangs), []string{"CommandHangs critical collector=zpool_list", "CommandHangs critical collector=zpool_status"})
}

// One disk whose smartctl keeps timing out raises CommandHangs for that
// disk, although the other disks answer in between.
func TestSmartTimeoutPerDisk(t *testing.T) {
	e := newTestEngine()
	good := smartReport(t, "nvme-intel-660p-healthy.json")
	for i := 0; i < 3; i++ {
		now := t0.Add(time.Duration(i) * 30 * time.Minute)
		observe(t, e, envOf(t, facts.CollectorError.Name(), "smart", now, facts.CollectorErrorData{Collector: "smart", Kind: "timeout", Target: "/dev/sdb",
			Command: "smartctl --json=c -a -n standby /dev/sdb", Message: "no answer within 30s; killed"}), now)
		observe(t, e, smartEnv(t, good, now.Add(time.Second)), now.Add(time.Second))
	}
	sameList(t, active(e, nameCommandHangs), []string{"CommandHangs critical collector=smart device=/dev/sdb"})
	a := find(e, nameCommandHangs)
	if !strings.Contains(a.Summary, "smartctl hangs on /dev/sdb") {
		t.Errorf("summary %q", a.Summary)
	}
	// sdb answers twice: over.
	sdb := *good
	sdb.Device = "/dev/sdb"
	for i := 0; i < 2; i++ {
		now := t0.Add(2*time.Hour + time.Duration(i)*30*time.Minute)
		observe(t, e, smartEnv(t, &sdb, now), now)
		e.Tick(now)
	}
	sameList(t, active(e, nameCommandHangs), nil)
}

// A pool that goes DEGRADED while zpool status hangs is paged from zpool
// list; status answering again takes the alert over without a second page.
func TestPoolStateFromListWhileStatusHangs(t *testing.T) {
	e := newTestEngine()
	observe(t, e, statusEnv(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt", t0), t0)
	list := func(health string, at time.Time) {
		observe(t, e, envOf(t, facts.ZpoolCapacity.Name(), "zpool_list", at, facts.CapacityData{Pools: []zfs.PoolList{{Name: "tank", Health: health, SizeBytes: 1 << 40}}}), at)
	}
	list("ONLINE", t0)
	now := t0.Add(time.Minute)
	list("DEGRADED", now)
	if find(e, namePoolState) != nil {
		t.Fatal("zpool list paged while zpool status answers: status names the devices")
	}
	observe(t, e, timeoutEnv(t, "zpool_status", "timeout", "", now), now)
	list("DEGRADED", now.Add(10*time.Second))
	sameList(t, active(e, namePoolState), []string{"PoolState warning pool=tank state=DEGRADED"})
	if a := find(e, namePoolState); !strings.Contains(a.Summary, "zpool status does not answer") {
		t.Errorf("summary %q", a.Summary)
	}
}

// A pool exported while zpool status hung (make e2e, scenario missing):
// status answers again without the pool while a zpool list from before the
// export still shows it DEGRADED. The list's alert goes to status, which
// keeps it for the missing pool: no false all-clear.
func TestPoolStateFromListHandedToStatus(t *testing.T) {
	e := newTestEngine()
	observe(t, e, statusEnv(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt", t0), t0)
	list := func(health string, at time.Time) {
		observe(t, e, envOf(t, facts.ZpoolCapacity.Name(), "zpool_list", at, facts.CapacityData{Pools: []zfs.PoolList{{Name: "tank", Health: health, SizeBytes: 1 << 40}}}), at)
	}
	now := t0.Add(time.Minute)
	observe(t, e, timeoutEnv(t, "zpool_status", "timeout", "", now), now)
	list("DEGRADED", now.Add(10*time.Second))
	want := []string{"PoolState warning pool=tank state=DEGRADED"}
	sameList(t, active(e, namePoolState), want)
	observe(t, e, poolsEnv(t, []*zfs.Pool{}, now.Add(20*time.Second)), now.Add(20*time.Second))
	list("DEGRADED", now.Add(21*time.Second))
	sameList(t, active(e, namePoolState), want)
	observe(t, e, poolsEnv(t, []*zfs.Pool{}, now.Add(30*time.Second)), now.Add(30*time.Second))
	observe(t, e, envOf(t, facts.ZpoolCapacity.Name(), "zpool_list", now.Add(31*time.Second), facts.CapacityData{}), now.Add(31*time.Second))
	sameList(t, active(e, namePoolState), want)
	if a := find(e, namePoolState); a == nil || !strings.Contains(a.Summary, keptMark) {
		t.Errorf("alert %+v, want it kept for the pool not imported", a)
	}
}

// A single-disk top-level vdev is named once in every summary (it was
// "hung//dev/disk/by-id/...").
func TestSingleDiskVdevNamedOnce(t *testing.T) {
	e := newTestEngine(func(c *configRules) { c.For = forZero(nameRedundancy, nameVdevErrors, nameVdevState) })
	observe(t, e, capturedStatusEnv(t, "suspended.zpool-status-j.json", t0), t0)
	// The same pool a moment later, its disk UNAVAIL (as zpool status showed it in make e2e).
	b, err := os.ReadFile(kstatDir + "suspended.zpool-status-j.json")
	if err != nil {
		t.Fatal(err)
	}
	pools, err := zfs.ParseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pools {
		if p.Name == "hung" {
			p.Vdevs[0].State = zfs.StateUnavail
		}
	}
	observe(t, e, poolsEnv(t, pools, t0.Add(time.Minute)), t0.Add(time.Minute))
	names := map[string]bool{}
	for _, a := range e.Alerts(testHost) {
		names[a.Name] = true
		if strings.Contains(a.Summary, "//") {
			t.Errorf("%s: %s", a.Name, a.Summary)
		}
	}
	if !names[nameRedundancy] || !names[nameVdevState] || !names[nameVdevErrors] {
		t.Errorf("alerts %v, want RedundancyMargin, VdevState and VdevErrors to check", names)
	}
}

// The disk of a single-disk pool vanished: for a while (37 s in make e2e)
// ZFS still calls the pool ONLINE while writes fail, and that is paged.
// When it then suspends the pool, PoolSuspended must not wait group_wait
// behind that page: it changes what the person must do. The status is the
// real capture with the pool's state set back to ONLINE (derived: the
// window before the suspension was not captured).
func TestPoolSuspendedSkipsGroupWait(t *testing.T) {
	e := newTestEngine()
	b, err := os.ReadFile(kstatDir + "suspended.zpool-status-j.json")
	if err != nil {
		t.Fatal(err)
	}
	pools, err := zfs.ParseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pools {
		if p.Name == "hung" {
			p.State = zfs.StateOnline
		}
	}
	observe(t, e, kstatEnv(t, "online", t0), t0)
	observe(t, e, envOf(t, facts.ZpoolStatus.Name(), "zpool_status", t0, facts.StatusData{Source: "json", Pools: pools}), t0)
	// The error counts wait errorsSettle for a state change to explain
	// them; here none comes, so they page.
	before := 0
	for d := time.Second; d <= errorsSettle+time.Second; d += time.Second {
		for _, n := range e.Tick(t0.Add(d)) {
			if n.Alerts[0].Labels["pool"] == "hung" {
				before++
			}
		}
	}
	if before == 0 {
		t.Fatal("the write errors before the suspension did not page")
	}
	now := t0.Add(errorsSettle + 3*time.Second)
	observe(t, e, kstatEnv(t, "suspended", now), now)
	if !e.DueFor(testHost, now) {
		t.Fatalf("PoolSuspended is not due at once after the earlier page (group_wait %s)", e.cfg.GroupWait.D())
	}
	got := noteLines(e.Tick(now))
	if len(got) == 0 || !strings.Contains(got[0], "firing critical PoolSuspended") {
		t.Errorf("notifications %q, want PoolSuspended at once", got)
	}
}
