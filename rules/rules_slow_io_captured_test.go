package rules

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/zfs"
)

// capturedEvents parses a real zpool events -v capture.
func capturedEvents(t *testing.T, file string) []zfs.Event {
	t.Helper()
	var evs []zfs.Event
	parseTestdata(t, captured+file, func(r io.Reader) (int, error) {
		return 0, zfs.ParseEvents(r, func(ev zfs.Event) error { evs = append(evs, ev); return nil })
	})
	return evs
}

// Captures l5 and l6: virtio-ZWV0003 of mirror kslow throttled, its
// slow-I/O counter 0, then 16, then 24 (zpool status -j, read every minute
// here): two rises, SlowIO names it; its delay events give the slowest I/O.
func TestSlowIOOnTheThrottledDiskOfTheCapture(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameSlowIO) })
	at := t0
	for _, f := range []string{"l5-before.zpool-status-j.json", "l5-slow.zpool-status-j.json", "l6-deadman-continue.zpool-status-s-j.json"} {
		observe(t, e, poolsEnv(t, statusPools(t, captured+f), at), at)
		at = at.Add(time.Minute)
	}
	for _, ev := range capturedEvents(t, "l5-slow.zpool-events-v.txt") {
		observe(t, e, eventEnv(t, ev, at), at)
	}
	e.Tick(at)
	sameList(t, active(e, nameSlowIO), []string{"SlowIO warning pool=kslow vdev=disk/by-id/virtio-ZWV0003-part1"})
	a := find(e, nameSlowIO)
	if want := "disk/by-id/virtio-ZWV0003-part1 in kslow/mirror-0: 24 new slow I/Os, likely the next disk to fail"; a.Summary != want {
		t.Errorf("summary %q, want %q", a.Summary, want)
	}
	// The slowest of l5's 16 delay events: zio_delta 0x3b5f17df0 ns.
	if a.Evidence["slowest_io"] != "15.937s" || a.Evidence["slow_ios"] != "24" {
		t.Errorf("evidence %v", a.Evidence)
	}
}

// Capture l6: deadman events of kslow, one a second (ziotime lowered to
// 3 s, checktime to 1 s). Read in order, IOHung pages at the first, and the
// newest says how long its I/O had hung. With failmode=wait (the default)
// one I/O hangs for 87 s, from 2.8 s at the first event; with continue the
// first I/O is failed after 16.9 s and its retry hangs 21.7 s.
func TestIOHungOnTheDeadmanEventsOfTheCapture(t *testing.T) {
	for _, tc := range []struct {
		file          string
		first, last   string
		deadmanEvents int
	}{
		{"l6-deadman.zpool-events-v.txt", "for 3 s", "for 87 s", 81},
		{"l6-deadman-continue.zpool-events-v.txt", "for 10 s", "for 22 s", 29},
	} {
		t.Run(tc.file, func(t *testing.T) { ioHungOnCapture(t, tc.file, tc.first, tc.last, tc.deadmanEvents) })
	}
}

func ioHungOnCapture(t *testing.T, file, first, final string, deadmanEvents int) {
	e := newTestEngine()
	evs := capturedEvents(t, file)
	deadman := 0
	for _, ev := range evs {
		observe(t, e, eventEnv(t, ev, ev.Time), ev.Time)
		if ev.Class != "ereport.fs.zfs.deadman" {
			continue
		}
		deadman++
		if deadman == 1 {
			e.Tick(ev.Time)
			if a := find(e, nameIOHung); a == nil || !strings.Contains(a.Summary, first) {
				t.Fatalf("after the first deadman event: %+v", a)
			}
		}
	}
	last := evs[len(evs)-1].Time
	e.Tick(last)
	sameList(t, active(e, nameIOHung), []string{"IOHung critical pool=kslow"})
	a := find(e, nameIOHung)
	if want := "I/O to pool kslow has not completed " + final + " (disk/by-id/virtio-ZWV0003-part1)"; a.Summary != want {
		t.Errorf("summary %q, want %q", a.Summary, want)
	}
	if deadman != deadmanEvents || a.Evidence["deadman_events"] != strconv.Itoa(deadmanEvents) {
		t.Errorf("%d deadman events, evidence %v", deadman, a.Evidence)
	}
	e.Tick(last.Add(6 * time.Hour))
	if got := active(e, nameIOHung); len(got) != 0 {
		t.Errorf("still %v after slow_io.clear", got)
	}
}

// 81 deadman events over 85 s page once: the growing hang time in the
// summary is no news to page again for.
func TestIOHungPagesOnceForAHang(t *testing.T) {
	e := newTestEngine()
	var pages []string
	for _, ev := range capturedEvents(t, "l6-deadman.zpool-events-v.txt") {
		observe(t, e, eventEnv(t, ev, ev.Time), ev.Time)
		for _, l := range noteLines(e.Tick(ev.Time.Add(time.Second))) {
			if strings.Contains(l, nameIOHung) {
				pages = append(pages, l)
			}
		}
	}
	if len(pages) != 1 || !strings.HasPrefix(pages[0], "firing critical IOHung: I/O to pool kslow has not completed for 3 s") {
		t.Errorf("pages %q", pages)
	}
}
