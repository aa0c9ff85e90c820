package rules

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// Tests of "never noisy": one incident pages once, and again only when it
// gets worse in a way the person must hear. They replay the outputs
// captured from OpenZFS 2.3.2 in the QEMU harness
// (testdata/captured/zfs-2.3.2/README.md describes each step).

const captured = "captured/zfs-2.3.2/"

// capturedStatus parses step's real `zpool status -p -P` output.
func capturedStatus(t *testing.T, step string) []*zfs.Pool {
	t.Helper()
	return statusPools(t, captured+step+".zpool-status-p-P.txt")
}

func poolNamed(t *testing.T, pools []*zfs.Pool, name string) *zfs.Pool {
	t.Helper()
	for _, p := range pools {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pool %s", name)
	return nil
}

// replay observes each step at its time and ticks every second until the
// next step, and 5 minutes past the last; it returns the notifications.
func replay(t *testing.T, e *Engine, steps [][]*zfs.Pool, every time.Duration) []alert.Notification {
	t.Helper()
	var out []alert.Notification
	for i, pools := range steps {
		at := t0.Add(time.Duration(i) * every)
		observe(t, e, poolsEnv(t, pools, at), at)
		end := every
		if i == len(steps)-1 {
			end = 5 * time.Minute
		}
		for d := time.Duration(0); d < end; d += time.Second {
			out = append(out, e.Tick(at.Add(d))...)
		}
	}
	return out
}

const corrupted = "/dev/disk/by-id/virtio-ZWV0002-part1"

// scrubSeries is step d of the capture: 4 MiB of garbage over virtio-ZWV0002,
// then `zpool scrub -w vault`. Real: step a before it (healthy) and
// d1-scrubbed after it (CKSUM 209, "scrub repaired 4.17M"). No output was
// captured while that scrub ran, so the observations in between are DERIVED
// from d1: only virtio-ZWV0002's CKSUM is set to a rising series that ends
// at d1's 209, and vault's scan is replaced by the real "scrub in progress"
// scan of step j1 (pool tank, same VM). extra, when set, changes the
// derived observation i further.
func scrubSeries(t *testing.T, extra func(i int, vault *zfs.Pool)) [][]*zfs.Pool {
	t.Helper()
	inProgress := poolNamed(t, capturedStatus(t, "j1-scrubbing"), "tank").Scan
	if inProgress.Function != zfs.ScanScrub || inProgress.State != zfs.ScanStateScanning {
		t.Fatalf("j1 scan %+v", inProgress)
	}
	steps := [][]*zfs.Pool{capturedStatus(t, "a")}
	for i, cksum := range []uint64{4, 31, 68, 104, 147, 183} {
		pools := capturedStatus(t, "d1-scrubbed")
		vault := poolNamed(t, pools, "vault")
		vault.Scan = inProgress
		leafNamed(pools, corrupted).ChecksumErrors = cksum
		if extra != nil {
			extra(i, vault)
		}
		steps = append(steps, pools)
	}
	last := capturedStatus(t, "d1-scrubbed")
	if l := leafNamed(last, corrupted); l == nil || l.ChecksumErrors != 209 {
		t.Fatalf("d1: %+v", l)
	}
	return append(steps, last)
}

// Before, every rise of the count was sent again: this series made 7
// pages, 6 of them critical (as on the real box: 7 critical pages in 90 s).
// Now 3: the first errors (a warning), the rate becoming critical (severity
// rises), and the scrub's result (a new finding) carrying the count the
// scrub ended with. The count passing 100 in between is news, but it came
// less than rules.group_interval after the critical page, so it waits and
// goes with the scrub's result.
func TestScrubOverCorruptionPagesOnce(t *testing.T) {
	got := replay(t, newTestEngine(), scrubSeries(t, nil), 13*time.Second)
	sameList(t, noteLines(got), []string{
		"firing warning PoolStatusMessage: pool vault: One or more devices has experienced an unrecoverable error.",
		"firing warning VdevErrors: disk/by-id/virtio-ZWV0002-part1 in vault/raidz2-0: 4 checksum errors",
		"--",
		"firing critical VdevErrorRate: disk/by-id/virtio-ZWV0002-part1 in vault/raidz2-0: 31 errors in 10m0s",
		"firing warning VdevErrors: disk/by-id/virtio-ZWV0002-part1 in vault/raidz2-0: 31 checksum errors",
		"--",
		"firing critical VdevErrorRate: disk/by-id/virtio-ZWV0002-part1 in vault/raidz2-0: 209 errors in 10m0s",
		"firing warning ScrubErrors: scrub of vault repaired 4.2 MiB",
		"firing warning VdevErrors: disk/by-id/virtio-ZWV0002-part1 in vault/raidz2-0: 209 checksum errors",
		"--",
	})
	critical := 0
	for _, n := range got {
		if n.MaxSeverity() == alert.Critical {
			critical++
		}
	}
	if critical != 2 {
		t.Errorf("%d critical pages, want 2 (the rate alert, then the scrub's result with the rate alert's count)", critical)
	}
}

// A second device with errors is a new device: the person hears of it,
// once, even though the first device's incident is already paged.
func TestScrubNewDevicePages(t *testing.T) {
	const other = "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001-part1"
	steps := scrubSeries(t, func(i int, vault *zfs.Pool) {
		if i >= 4 { // DERIVED: a second device returns bad data too
			leafNamed([]*zfs.Pool{vault}, other).ChecksumErrors = uint64(i - 2)
		}
	})
	// d1 itself shows it clean again: keep it at 3, as counters only fall at a clear.
	leafNamed(steps[len(steps)-1], other).ChecksumErrors = 3
	var lines []string
	for _, l := range noteLines(replay(t, newTestEngine(), steps, 13*time.Second)) {
		if strings.Contains(l, "WCC7K0000001") {
			lines = append(lines, l)
		}
	}
	// Paged once, when its `for` ended: the count it had by then.
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "firing warning VdevErrors: disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001-part1") {
		t.Errorf("the second device's pages: %q", lines)
	}
}

// firingAtLeast lists the firing alerts of severity warning or worse.
func firingAtLeast(ns []alert.Notification, s alert.Severity) []string {
	var out []string
	for _, n := range ns {
		for _, a := range n.Alerts {
			if a.State == alert.Firing && a.Severity.Rank() >= s.Rank() {
				out = append(out, a.Name+": "+a.Summary)
			}
		}
	}
	return out
}

// Step b, all real: virtio-ZWV0001 offline (DEGRADED), `zpool online`, the
// resilver of what it missed (b2, b3: ONLINE, "One or more devices is
// currently being resilvered"), done (b4). The offline pages; the resilver
// is an info notice, not a WARNING page.
func TestResilverAfterOnlineIsInfo(t *testing.T) {
	steps := [][]*zfs.Pool{capturedStatus(t, "a"), capturedStatus(t, "b1-offline")}
	fault := replay(t, newTestEngine(), steps, time.Minute)
	for _, s := range []string{"b2-resilvering", "b3-resilvering", "b4-online"} {
		steps = append(steps, capturedStatus(t, s))
	}
	got := replay(t, newTestEngine(), steps, time.Minute)
	if len(fault) != 1 || len(got) < 3 {
		t.Fatalf("fault %v, all %v", noteLines(fault), noteLines(got))
	}
	if w := firingAtLeast(got[1:], alert.Warning); len(w) > 0 {
		t.Errorf("the resilver paged: %v", w)
	}
	sameList(t, noteLines(got[1:]), []string{
		"firing info Resilver: pool vault is resilvering: 3.3% done",
		"resolved warning PoolState: pool vault is DEGRADED: disk/by-id/virtio-ZWV0001-part1 OFFLINE",
		"resolved warning VdevState: disk/by-id/virtio-ZWV0001-part1 in vault/raidz2-0 is OFFLINE: raidz2-0 can lose 1 more disk",
		"--",
		"resolved warning RedundancyMargin: vault/raidz2-0 can lose 1 more disk",
		"resolved info Resilver: pool vault: resilver finished with 0 error(s)",
		"--",
	})
	if got[1].MaxSeverity() != alert.Info {
		t.Errorf("resilver notice is %s, want info", got[1].MaxSeverity())
	}
}

// Step e, all real: the pulled scsi-35000c500a0000001 (c5: REMOVED, vault
// DEGRADED) is replaced with `zpool replace` (e1, e2: resilvering onto
// wwn-0x5000c500a0000003), done (e3). The replacement's resilver pages
// nothing; it is an info notice. (The re-plug of step c3 resilvered too, but
// it had finished when c5 was captured: no real output shows that
// resilver running.)
func TestResilverAfterReplaceIsInfo(t *testing.T) {
	var steps [][]*zfs.Pool
	for _, s := range []string{"c5-replugged", "e1-replacing", "e2-replacing", "e3-replaced"} {
		steps = append(steps, capturedStatus(t, s))
	}
	got := replay(t, newTestEngine(), steps, time.Minute)
	if len(got) < 2 {
		t.Fatalf("%v", noteLines(got))
	}
	if w := firingAtLeast(got[1:], alert.Warning); len(w) > 0 {
		t.Errorf("the resilver paged: %v", w)
	}
	lines := strings.Join(noteLines(got), "\n")
	if !strings.Contains(lines, "firing info Resilver: pool vault is resilvering") || strings.Contains(lines, namePoolStatusMessage) {
		t.Errorf("want an info Resilver notice and no PoolStatusMessage:\n%s", lines)
	}
}

// A resilver with errors is no routine: its status message still warns.
// DERIVED from b2 (real): one checksum error set on the resilvering disk.
func TestResilverWithErrorsStillWarns(t *testing.T) {
	pools := capturedStatus(t, "b2-resilvering")
	leafNamed(pools, "/dev/disk/by-id/virtio-ZWV0001-part1").ChecksumErrors = 1
	e := newTestEngine()
	observe(t, e, poolsEnv(t, pools, t0), t0)
	if a := find(e, namePoolStatusMessage); a == nil || a.Severity != alert.Warning {
		t.Errorf("status message %+v", a)
	}
	if routineResilver(poolNamed(t, capturedStatus(t, "b2-resilvering"), "vault")) != true {
		t.Error("real b2 is a routine resilver")
	}
}

// The real sequence after step d: the scrub's finding (d1), `zpool clear`
// (d2), a disk pulled (c1), export/import (c3, c4), a re-plug and its
// resilver (c5), `zpool replace` and its resilver (e1–e3). Every scan line
// after c4 shows a resilver, none a scrub: the finding stays, and is never
// "resolved" by a resilver. Then DERIVED from e3: vault's scan replaced by
// the real clean scrub of step j3 (tank, same VM, ended later) — a later
// clean scrub ends it.
func TestScrubFindingSurvivesResilver(t *testing.T) {
	e := newTestEngine()
	var all []alert.Notification
	steps := []string{"d1-scrubbed", "d2-cleared", "c1-removed", "c3-imported", "c4-missing", "c5-replugged", "e1-replacing", "e2-replacing", "e3-replaced"}
	for i, s := range steps {
		now := t0.Add(time.Duration(i) * time.Minute)
		observe(t, e, poolsEnv(t, capturedStatus(t, s), now), now)
		all = append(all, e.Tick(now)...)
		a := find(e, nameScrubErrors)
		if a == nil || a.Summary != "scrub of vault repaired 4.2 MiB" || a.Severity != alert.Warning {
			t.Fatalf("%s: ScrubErrors %+v", s, a)
		}
	}
	sent := 0
	for _, l := range noteLines(all) {
		if strings.Contains(l, nameScrubErrors) {
			sent++
			if !strings.HasPrefix(l, "firing") {
				t.Errorf("%s", l)
			}
		}
	}
	if sent != 1 {
		t.Errorf("ScrubErrors sent %d times, want once:\n%s", sent, strings.Join(noteLines(all), "\n"))
	}

	clean := capturedStatus(t, "e3-replaced")
	poolNamed(t, clean, "vault").Scan = poolNamed(t, capturedStatus(t, "j3-scrubbed"), "tank").Scan
	now := t0.Add(time.Duration(len(steps)) * time.Minute)
	observe(t, e, poolsEnv(t, clean, now), now)
	lines := noteLines(e.Tick(now))
	if find(e, nameScrubErrors) != nil || !strings.Contains(strings.Join(lines, "\n"), "resolved warning ScrubErrors") {
		t.Errorf("a clean scrub should end the finding: %v", lines)
	}
}

// capturedSmart parses a real smartctl -j output of the capture.
func capturedSmart(t *testing.T, file string) *smart.Report {
	t.Helper()
	return parseTestdata(t, filepath.Join(captured, file), smart.Parse)
}

// QEMU's NVMe reports available_spare 0 with available_spare_threshold 0:
// no spare reporting, not "spare at 0 %". The drive of step g, whose
// critical_warning has bit 2 set, gets that alert and no spare alert.
func TestNVMeWithoutSpareReporting(t *testing.T) {
	for file, want := range map[string][]string{
		"a.smartctl-a-json-nvme.json":        nil,
		"g.smartctl-a-json-nvme1-ok.json":    nil,
		"g.smartctl-a-json-nvme-failed.json": {"NVMeCriticalWarning critical disk=ZWNVME0001", "SmartFailed critical disk=ZWNVME0001"},
	} {
		r := capturedSmart(t, file)
		if r.NVMe == nil || r.NVMe.AvailableSpare != 0 || r.NVMe.AvailableSpareThreshold != 0 {
			t.Fatalf("%s: %+v", file, r.NVMe)
		}
		e := newTestEngine()
		observe(t, e, smartEnv(t, r, t0), t0)
		sameList(t, active(e), want)
	}
	// DERIVED from a real report: a drive with a 0 % threshold that does
	// report its spare is still judged against nvme_spare_warning.
	r := smartReport(t, "nvme-intel-660p-healthy.json")
	r.NVMe.AvailableSpare, r.NVMe.AvailableSpareThreshold = 15, 0
	e := newTestEngine()
	observe(t, e, smartEnv(t, r, t0), t0)
	sameList(t, active(e), []string{"NVMeSpare warning disk=BTNH93710FS91P0B"})
}

// A pulled disk shows I/O errors for a second or two before ZFS marks it
// REMOVED (make e2e: "3 read and 24 write errors" 1.8 s before REMOVED).
// The first page is the REMOVED one, and the counts never page on their
// own. Real: steps a and c1-removed; DERIVED: the observation between, a
// with the pulled disk's counters set as e2e saw them.
func TestErrorsBeforeRemovalWaitForTheState(t *testing.T) {
	const pulled = "/dev/disk/by-id/scsi-35000c500a0000001-part1"
	erring := capturedStatus(t, "a")
	l := leafNamed(erring, pulled)
	if l == nil {
		t.Fatal("no pulled disk in step a")
	}
	l.ReadErrors, l.WriteErrors = 3, 24
	e := newTestEngine()
	observe(t, e, poolsEnv(t, capturedStatus(t, "a"), t0), t0)
	var got []string
	at := t0.Add(time.Second)
	observe(t, e, poolsEnv(t, erring, at), at)
	for d := time.Duration(0); d < 2*time.Second; d += time.Second {
		got = append(got, noteLines(e.Tick(at.Add(d)))...)
	}
	at = at.Add(2 * time.Second)
	observe(t, e, poolsEnv(t, capturedStatus(t, "c1-removed"), at), at)
	for d := time.Duration(0); d < time.Minute; d += time.Second {
		got = append(got, noteLines(e.Tick(at.Add(d)))...)
	}
	if len(got) == 0 || !strings.Contains(got[0], "REMOVED") {
		t.Fatalf("first page %q, want the REMOVED one", got)
	}
	for _, g := range got {
		if strings.Contains(g, "VdevErrors") || strings.Contains(g, "VdevErrorRate") {
			t.Errorf("the counts paged on their own: %q", got)
			break
		}
	}
}
