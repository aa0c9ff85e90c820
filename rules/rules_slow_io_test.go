package rules

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
)

const slowLeaf0 = "/dev/disk/by-id/virtio-ZWV0002-part1"

// slowPools is the real `zpool status -j` of capture step a (every
// slow_ios 0) with virtio-ZWV0002's counter set to n: a derived input, the
// counter being the only edit.
func slowPools(t *testing.T, n uint64) []*zfs.Pool {
	t.Helper()
	pools := statusPools(t, captured+"a.zpool-status-j.json")
	for _, l := range poolNamed(t, pools, "vault").Vdevs[0].Leaves() {
		if l.Path == slowLeaf0 {
			l.SlowIOs = &n
			return pools
		}
	}
	t.Fatal("no " + slowLeaf0 + " in vault")
	return nil
}

func eventEnv(t *testing.T, ev zfs.Event, at time.Time) bus.Envelope {
	t.Helper()
	return envOf(t, facts.ZpoolEvent.Name(), "zpool_events", at, facts.EventData{Event: ev})
}

// Slow I/Os the counter held when zwatch first saw it are history; two
// polls that see it rise within the hour are SlowIO, naming the disk; a
// zpool clear is no rise; six hours without a rise resolve it.
func TestSlowIOFiresOnRisesAndResolvesAfterClear(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameSlowIO) })
	at := t0
	step := func(n uint64, d time.Duration) {
		at = at.Add(d)
		observe(t, e, poolsEnv(t, slowPools(t, n), at), at)
		e.Tick(at)
	}
	step(40, 0) // old slow I/Os: no news
	step(40, time.Minute)
	if got := active(e, nameSlowIO); len(got) != 0 {
		t.Fatalf("first sight fired %v", got)
	}
	step(43, time.Minute) // one rise: not yet
	if got := active(e, nameSlowIO); len(got) != 0 {
		t.Fatalf("one rise fired %v", got)
	}
	step(51, 10*time.Minute) // second rise within the hour
	sameList(t, active(e, nameSlowIO), []string{"SlowIO warning pool=vault vdev=disk/by-id/virtio-ZWV0002-part1"})
	a := find(e, nameSlowIO)
	if !strings.Contains(a.Summary, "11 new slow I/Os") || !strings.Contains(a.Summary, "next disk to fail") {
		t.Errorf("summary %q", a.Summary)
	}
	step(0, time.Minute) // zpool clear: not a rise, still firing
	sameList(t, active(e, nameSlowIO), []string{"SlowIO warning pool=vault vdev=disk/by-id/virtio-ZWV0002-part1"})
	step(0, 6*time.Hour)
	if got := active(e, nameSlowIO); len(got) != 0 {
		t.Errorf("still %v six hours after the last rise", got)
	}
}

// Rises further apart than slow_io.window are no trend.
func TestSlowIORisesOutsideTheWindowAreNoTrend(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameSlowIO) })
	at := t0
	for i, n := range []uint64{0, 1, 2, 3} {
		at = at.Add(time.Duration(i) * 2 * time.Hour)
		observe(t, e, poolsEnv(t, slowPools(t, n), at), at)
		e.Tick(at)
	}
	if got := active(e, nameSlowIO); len(got) != 0 {
		t.Errorf("rises two hours apart fired %v", got)
	}
}

// deadmanAt is a deadman event of pool vault whose I/O was issued age
// before at. The numbers are made for the arithmetic (an ENA of format 1
// whose time is zio_timestamp + age), not copied from a real event.
func deadmanAt(at time.Time, age time.Duration) zfs.Event {
	const issued = 0x150e03a5d84 // ns since boot
	ena := (uint64(issued)+uint64(age))<<20 | 1
	return zfs.Event{Time: at, Class: "ereport.fs.zfs.deadman", Pool: "vault", VdevPath: slowLeaf0,
		Fields: map[string]string{"ena": fmt.Sprintf("0x%x", ena), "zio_timestamp": fmt.Sprintf("0x%x", issued)}}
}

// A deadman event is IOHung at once, critical, saying how long the I/O
// has hung (from the event's own clocks) and the device; repeats keep it;
// slow_io.clear without one resolves it.
func TestIOHungFromDeadmanEvents(t *testing.T) {
	e := newTestEngine()
	observe(t, e, eventEnv(t, deadmanAt(t0, 330*time.Second), t0), t0)
	e.Tick(t0)
	sameList(t, active(e, nameIOHung), []string{"IOHung critical pool=vault"})
	a := find(e, nameIOHung)
	if want := "I/O to pool vault has not completed for 330 s (disk/by-id/virtio-ZWV0002-part1)"; a.Summary != want {
		t.Errorf("summary %q, want %q", a.Summary, want)
	}
	at := t0.Add(time.Minute) // the deadman checks again a minute later
	observe(t, e, eventEnv(t, deadmanAt(at, 390*time.Second), at), at)
	if a := find(e, nameIOHung); !strings.Contains(a.Summary, "for 390 s") {
		t.Errorf("summary %q after the second event", a.Summary)
	}
	at = at.Add(6 * time.Hour)
	e.Tick(at)
	if got := active(e, nameIOHung); len(got) != 0 {
		t.Errorf("still %v six hours after the last deadman event", got)
	}
}

// Without an ENA of format 1 the age is not known: the summary says what
// is (longer than the deadman's time, and since the first event).
func TestIOHungWithoutClocks(t *testing.T) {
	e := newTestEngine()
	ev := zfs.Event{Time: t0, Class: "ereport.fs.zfs.deadman", Pool: "vault"}
	observe(t, e, eventEnv(t, ev, t0), t0)
	e.Tick(t0)
	a := find(e, nameIOHung)
	if a == nil || !strings.Contains(a.Summary, "longer than zfs_deadman_ziotime_ms") {
		t.Fatalf("got %+v", a)
	}
}

// Delay events do not make SlowIO where zpool prints the counter: the
// counter speaks. They do where it prints none (before 0.8), one rise a
// minute at most.
func TestSlowIOFromDelayEventsWithoutCounter(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameSlowIO) })
	pools := statusPools(t, captured+"a.zpool-status-p-P.txt") // text without -s: no counters
	observe(t, e, poolsEnv(t, pools, t0), t0)
	delay := zfs.Event{Class: "ereport.fs.zfs.delay", Pool: "vault", VdevPath: slowLeaf0,
		Fields: map[string]string{"zio_delta": "0x9502f9000"}} // 40 s; made for the test
	for i, d := range []time.Duration{0, 10 * time.Second, 2 * time.Minute} {
		at := t0.Add(d)
		delay.Time = at
		observe(t, e, eventEnv(t, delay, at), at)
		e.Tick(at)
		if got := active(e, nameSlowIO); (i < 2) != (len(got) == 0) {
			t.Fatalf("after delay event %d: %v", i, got)
		}
	}
	a := find(e, nameSlowIO)
	if !strings.Contains(a.Summary, "2 new delay events") || a.Evidence["slowest_io"] != "40s" {
		t.Errorf("got %q %v", a.Summary, a.Evidence)
	}
}

// The ENA reading on a real ereport: the io ereport of openzfs/zfs#12629
// was made 39,769 ns after its I/O was issued (ena time 0x150e03af8dd,
// zio_timestamp 0x150e03a5d84), close to its zio_delta of 29,906 ns.
func TestDeadmanAgeFromARealENA(t *testing.T) {
	var evs []zfs.Event
	parseTestdata(t, "zpool-events/zfs-2021-issue-12629-io-ereport.txt", func(r io.Reader) (int, error) {
		return 0, zfs.ParseEvents(r, func(ev zfs.Event) error { evs = append(evs, ev); return nil })
	})
	if len(evs) == 0 {
		t.Fatal("no event")
	}
	var k kernelClock
	k.learn(&evs[0])
	if age, ok := k.ioAge(&evs[0]); !ok || age != 39769*time.Nanosecond {
		t.Errorf("age %v, ok %v", age, ok)
	}
}

// What SlowIO counts survives a restart (the host state is saved as JSON):
// a rise before it and one after it are two rises.
func TestSlowIORisesSurviveARestart(t *testing.T) {
	cfg := func(c *config.RulesConfig) { c.For = forZero(nameSlowIO) }
	e := newTestEngine(cfg)
	observe(t, e, poolsEnv(t, slowPools(t, 5), t0), t0)
	at := t0.Add(time.Minute)
	observe(t, e, poolsEnv(t, slowPools(t, 6), at), at)
	saved, err := json.Marshal(e.hosts[testHost])
	if err != nil {
		t.Fatal(err)
	}
	e = newTestEngine(cfg)
	h := newHostState(testHost)
	if err := json.Unmarshal(saved, h); err != nil {
		t.Fatal(err)
	}
	h.fixMaps()
	e.hosts[testHost] = h
	at = at.Add(time.Minute)
	observe(t, e, poolsEnv(t, slowPools(t, 9), at), at)
	e.Tick(at)
	sameList(t, active(e, nameSlowIO), []string{"SlowIO warning pool=vault vdev=disk/by-id/virtio-ZWV0002-part1"})
}
