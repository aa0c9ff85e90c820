package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// sentUntil ticks e every second from `from` to `to` and returns what it sent.
func sentUntil(e *Engine, from, to time.Time) []alert.Notification {
	var out []alert.Notification
	for at := from; !at.After(to); at = at.Add(time.Second) {
		out = append(out, e.Tick(at)...)
	}
	return out
}

// beforeUnplug is the tree of capture l1 (mirror kscsi) as it was before
// the scsi disk was pulled. DERIVED, not captured: the harness read the
// status only after the unplug, so this is l1-scsi-unplug.zpool-status-j.json
// with the pulled leaf, its mirror and the pool set back to ONLINE and
// the pool's status and action lines (about the removed device) dropped.
func beforeUnplug(t *testing.T) []*zfs.Pool {
	t.Helper()
	pools := statusPools(t, captured+"l1-scsi-unplug.zpool-status-j.json")
	for _, p := range pools {
		p.State, p.Status, p.Action = zfs.StateOnline, "", ""
		if p.Root != nil {
			p.Root.State = zfs.StateOnline
		}
		for _, v := range p.Vdevs {
			v.State = zfs.StateOnline
			for _, l := range v.Leaves() {
				l.State = zfs.StateOnline
			}
		}
	}
	return pools
}

// Capture l1: the scsi disk of mirror kscsi is hot-unplugged. ZFS's own
// statechange event pages at once, from the tree the last status gave:
// the right severity, the disk's by-id name and GUID, and the way to
// replace it. The status that follows says the same: nothing more is sent.
func TestStateEventPagesBeforeTheStatus(t *testing.T) {
	e := newTestEngine()
	at := t0
	observe(t, e, poolsEnv(t, beforeUnplug(t), at), at)
	if got := noteLines(sentUntil(e, at, at.Add(time.Minute))); len(got) != 0 {
		t.Fatalf("a healthy mirror paged: %v", got)
	}
	at = at.Add(time.Hour)
	for _, ev := range capturedEvents(t, "l1-scsi-unplug.zpool-events-v.txt") {
		observe(t, e, eventEnv(t, ev, at), at)
	}
	first := sentUntil(e, at, at)
	lines := noteLines(first)
	if len(first) != 1 {
		t.Fatalf("the event sent %d notifications, want the page at once:\n%s", len(first), strings.Join(lines, "\n"))
	}
	page := strings.Join(lines, "\n")
	for _, want := range []string{"REMOVED", "scsi-35000c500a0000001"} {
		if !strings.Contains(page, want) {
			t.Errorf("the first page lacks %q:\n%s", want, page)
		}
	}
	if s := first[0].MaxSeverity(); s != alert.Critical && s != alert.Warning {
		t.Errorf("the page's severity is %s", s)
	}
	// The page's timing starts at ZFS's own time of the event (its
	// `time = 0x6b0f11e4 0xec82e00`).
	if tm := first[0].Timing; tm == nil || !tm.Event.Equal(time.Unix(0x6b0f11e4, 0xec82e00)) ||
		!tm.Read.Equal(at) || !tm.Judged.Equal(at) {
		t.Errorf("the page's timing %+v", first[0].Timing)
	}
	margin := find(e, nameRedundancy)
	if margin == nil || !strings.Contains(margin.Summary, "no redundancy left") {
		t.Errorf("the mirror's margin from the event: %+v", margin)
	}
	fromEvent := active(e)

	// zpool status, a second later, confirms: nothing is sent again.
	at = at.Add(time.Second)
	observe(t, e, statusEnv(t, captured+"l1-scsi-unplug.zpool-status-j.json", at), at)
	if again := noteLines(sentUntil(e, at, at.Add(10*time.Minute))); len(again) != 0 {
		t.Errorf("the status sent again what the event had paged:\n%s", strings.Join(again, "\n"))
	}
	sameList(t, active(e), fromEvent)
}

// Capture l4: a disk of mirror kio returns read errors until ZFS faults
// it. The statechange to FAULTED pages from the event; the status after
// it may add what only it knows (the error counters), once.
func TestFaultEventPagesAndTheStatusUpdatesOnce(t *testing.T) {
	e := newTestEngine()
	at := t0
	observe(t, e, statusEnv(t, captured+"l4-before.zpool-status-j.json", at), at)
	sentUntil(e, at, at.Add(time.Minute))
	at = at.Add(time.Hour)
	for _, ev := range capturedEvents(t, "l4-read-errors.zpool-events-v.txt") {
		observe(t, e, eventEnv(t, ev, at), at)
	}
	first := sentUntil(e, at, at)
	if len(first) != 1 || !strings.Contains(strings.Join(noteLines(first), "\n"), "FAULTED") {
		t.Fatalf("the fault event's page: %v", noteLines(first))
	}
	at = at.Add(time.Second)
	observe(t, e, statusEnv(t, captured+"l4-read-errors.zpool-status-j.json", at), at)
	if later := sentUntil(e, at, at.Add(10*time.Minute)); len(later) > 1 {
		t.Errorf("the status sent %d notifications after the event's page, want at most one update:\n%s",
			len(later), strings.Join(noteLines(later), "\n"))
	}
}

// An event about a vdev the tree does not have never pages a disk: a
// crafted GUID and path, another pool's GUID, and any event before the
// first status. Good news (a vdev back ONLINE) waits for the status.
func TestStateEventsThatChangeNothing(t *testing.T) {
	real := capturedEvents(t, "l1-scsi-unplug.zpool-events-v.txt")[0]
	unknownLeaf := real
	unknownLeaf.VdevGUID, unknownLeaf.VdevPath = "12345", "/dev/disk/by-id/scsi-0000"
	otherPool := real
	otherPool.PoolGUID = "999"
	online := real
	online.VdevState = zfs.StateOnline
	for name, ev := range map[string]zfs.Event{"unknown leaf": unknownLeaf, "other pool": otherPool, "back online": online} {
		e := newTestEngine()
		observe(t, e, poolsEnv(t, beforeUnplug(t), t0), t0)
		observe(t, e, eventEnv(t, ev, t0.Add(time.Hour)), t0.Add(time.Hour))
		if got := noteLines(sentUntil(e, t0, t0.Add(2*time.Hour))); len(got) != 0 {
			t.Errorf("%s: paged %v", name, got)
		}
	}

	// No status yet (zwatch just started): the event waits for the poll,
	// which pages as before.
	e := newTestEngine()
	observe(t, e, eventEnv(t, real, t0), t0)
	if got := sentUntil(e, t0, t0.Add(time.Minute)); len(got) != 0 {
		t.Errorf("paged with no tree known: %v", noteLines(got))
	}
	at := t0.Add(2 * time.Second)
	observe(t, e, statusEnv(t, captured+"l1-scsi-unplug.zpool-status-j.json", at), at)
	if got := sentUntil(e, at, at.Add(time.Minute)); len(got) != 1 {
		t.Errorf("the status after the event sent %d notifications, want its page", len(got))
	}
}

// The tree an event leaves is the one zpool status prints for the same
// moment: capture l1's pulled disk, and each state a leaf of a raidz2 can
// take, as OpenZFS propagates it (vdev_propagate_state).
func TestApplyStateEventMatchesTheStatus(t *testing.T) {
	before := beforeUnplug(t)
	after := statusPools(t, captured+"l1-scsi-unplug.zpool-status-j.json")
	ev := capturedEvents(t, "l1-scsi-unplug.zpool-events-v.txt")[0]
	state, ok := stateEvent(&ev)
	if !ok || state != zfs.StateRemoved {
		t.Fatalf("stateEvent = %q, %v", state, ok)
	}
	got, changed := applyStateEvent(before, &ev, state)
	if !changed {
		t.Fatal("the captured event changed nothing")
	}
	states := func(pools []*zfs.Pool) string {
		var b strings.Builder
		for _, p := range pools {
			b.WriteString(p.Name + "=" + p.State)
			for _, cv := range p.AllVdevs() {
				b.WriteString(" " + cv.Vdev.Name + "=" + cv.Vdev.State)
				for _, l := range cv.Vdev.Leaves() {
					b.WriteString(" " + l.Name + "=" + l.State)
				}
			}
		}
		return b.String()
	}
	if states(got) != states(after) {
		t.Errorf("from the event: %s\nzpool status:   %s", states(got), states(after))
	}
	if states(before) == states(got) {
		t.Error("the tree the event was applied to changed in place")
	}

	leaf := func(name, state string) *zfs.Vdev {
		return &zfs.Vdev{Name: name, Type: zfs.VdevDisk, State: state, GUID: name}
	}
	raidz := func(states ...string) *zfs.Pool {
		v := &zfs.Vdev{Name: "raidz2-0", Type: zfs.VdevRaidz, Parity: 2, State: zfs.StateOnline}
		for i, s := range states {
			v.Children = append(v.Children, leaf(string(rune('a'+i)), s))
		}
		return &zfs.Pool{Name: "tank", State: zfs.StateOnline, Vdevs: []*zfs.Vdev{v}}
	}
	for _, c := range []struct {
		before      *zfs.Pool
		leaf, state string
		want        string // pool, raidz
	}{
		{raidz("ONLINE", "ONLINE", "ONLINE", "ONLINE"), "a", "FAULTED", "DEGRADED DEGRADED"},
		{raidz("FAULTED", "ONLINE", "ONLINE", "ONLINE"), "b", "REMOVED", "DEGRADED DEGRADED"},
		{raidz("FAULTED", "REMOVED", "ONLINE", "ONLINE"), "c", "OFFLINE", "UNAVAIL UNAVAIL"},
		{raidz("ONLINE", "ONLINE", "ONLINE", "ONLINE"), "d", "DEGRADED", "DEGRADED DEGRADED"},
	} {
		ev := zfs.Event{Class: "resource.fs.zfs.statechange", Pool: "tank", VdevGUID: c.leaf, VdevState: c.state}
		got, changed := applyStateEvent([]*zfs.Pool{c.before}, &ev, c.state)
		if !changed || got[0].State+" "+got[0].Vdevs[0].State != c.want {
			t.Errorf("%s %s: pool, raidz = %s %s (changed %v), want %s", c.leaf, c.state, got[0].State, got[0].Vdevs[0].State, changed, c.want)
		}
	}
}
