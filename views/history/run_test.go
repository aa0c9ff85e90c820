package history

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// runStore runs the writer of a store on b until the returned stop is called.
func runStore(t *testing.T, b *bus.Bus) (*Store, func()) {
	t.Helper()
	s := openStore(t, b, testConfig())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	// The writer takes each subject's newest fact at its start: wait for
	// its consumers before publishing, so that it sees every fact.
	deadline := time.Now().Add(10 * time.Second)
	for _, name := range []string{bus.StreamFacts, bus.StreamAlerts} {
		st, err := b.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for {
			info, err := st.Info(ctx)
			if err == nil && info.State.Consumers > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the writer has no consumer on %s after 10s", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return s, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("Run did not return within 15s of its context ending")
		}
	}
}

// publishReadings publishes, through the facts stream, disk 0's SMART
// reading, the pool's capacity and status at t0+k*30min for k in [from, to].
func publishReadings(t *testing.T, b *bus.Bus, t0 int64, from, to int, status *zfs.Pool, lists []zfs.PoolList) {
	t.Helper()
	ctx := context.Background()
	r := smartOf(t, "../../testdata/smartctl/sata-hdd-wd140edfz-healthy.json")
	for k := from; k <= to; k++ {
		ts := t0 + int64(k)*smartEvery
		at := time.Unix(ts, 0)
		r.TemperatureC = ptr(simTemp(0, ts))
		pubs := []struct {
			subject string
			data    []byte
		}{
			{factSubject("nas1", facts.Smart.Name(), r.Serial), wrap(t, facts.Smart.Name(), "nas1", at, r)},
			{factSubject("nas1", facts.ZpoolCapacity.Name()), wrap(t, facts.ZpoolCapacity.Name(), "nas1", at, facts.CapacityData{Pools: lists})},
			{factSubject("nas1", facts.ZpoolStatus.Name()), wrap(t, facts.ZpoolStatus.Name(), "nas1", at, facts.StatusData{Source: "json", Pools: []*zfs.Pool{status}})},
		}
		for _, p := range pubs {
			if err := b.Publish(ctx, p.subject, p.data); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// waitRaw waits until source has n raw points stored.
func waitRaw(t *testing.T, s *Store, source string, n int) []point {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pts, err := s.tierPoints(context.Background(), "nas1", source, TierRaw, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pts) >= n || time.Now().After(deadline) {
			if len(pts) != n {
				t.Fatalf("%s: %d raw points stored, want %d", source, len(pts), n)
			}
			return pts
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The writer reads real facts from the bus; after a restart (the bus
// closed and opened again from its state directory) the data is there,
// the facts re-delivered at start add nothing, the open hour and day
// carry on with the points from before the restart, and the scrub that
// every status still shows is one event.
func TestRunSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Unix()
	status := statusOf(t, "j4-errors.zpool-status-j.json")[0]
	lists := listOf(t, "j4-errors.zpool-list-Hp.txt")
	disk := Source(SourceDisk, smartOf(t, "../../testdata/smartctl/sata-hdd-wd140edfz-healthy.json").Serial)

	b := openBus(t, dir)
	s, stop := runStore(t, b)
	publishReadings(t, b, t0, 0, 50, status, lists) // to 25:00, the open hour and day
	waitRaw(t, s, disk, 51)
	firing := alert.Alert{Name: "VdevErrors", Severity: "critical", State: alert.Firing, Fingerprint: "fp1",
		Labels: map[string]string{"pool": "tank"}, StartsAt: time.Unix(t0+3600, 0).UTC()}
	note, err := bus.WrapSchema(bus.SchemaNotification, "nas1", "rules", time.Unix(t0+3600, 0),
		alert.Notification{ID: "n1", Host: "nas1", Status: alert.Firing, Alerts: []alert.Alert{firing}, Created: time.Unix(t0+3600, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(context.Background(), bus.Subject("nas1", bus.KindAlert), note); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, s, EventAlert, 1)
	stop()
	b.Close()

	b = openBus(t, dir)
	defer b.Close()
	s, stop = runStore(t, b)
	defer stop()
	publishReadings(t, b, t0, 51, 96, status, lists) // to 48:00, closing day 1
	pts := waitRaw(t, s, disk, 97)
	for i := 1; i < len(pts); i++ {
		if pts[i].T <= pts[i-1].T {
			t.Fatalf("raw points out of order or doubled at %s", time.Unix(pts[i].T, 0).UTC())
		}
	}

	ctx := context.Background()
	hours, err := s.tierPoints(ctx, "nas1", disk, TierHour, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	days, err := s.tierPoints(ctx, "nas1", disk, TierDay, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hours) != 48 || len(days) != 2 {
		t.Fatalf("%d hourly and %d daily aggregates, want 48 and 2", len(hours), len(days))
	}
	// Hour 25 had its first reading before the restart, its second after.
	h25 := hours[25].Aggs[SeriesTemperature]
	mn, mx, mean := expectedTemp(0, t0+25*3600, 3600)
	if hours[25].T != t0+25*3600 || h25.N != 2 || h25.Min != mn || h25.Max != mx || h25.Mean != mean {
		t.Errorf("hour 25: %+v at %d, want min %v max %v mean %v of 2", h25, hours[25].T, mn, mx, mean)
	}
	d1 := days[1].Aggs[SeriesTemperature]
	mn, mx, mean = expectedTemp(0, t0+86400, 86400)
	if d1.N != 48 || d1.Min != mn || d1.Max != mx || math.Abs(d1.Mean-mean) > 1e-12 {
		t.Errorf("day 1: %+v, want min %v max %v mean %v of 48", d1, mn, mx, mean)
	}
	// The pool's point joins its capacity and its vdev error counters.
	pool, err := s.Query(ctx, "nas1", Source(SourcePool, "tank"), time.Unix(t0, 0), time.Unix(t0+48*3600, 0))
	if err != nil {
		t.Fatal(err)
	}
	last := len(pool.Times) - 1
	if c := pool.Series[SeriesCapacity]; c.Mean[last] == nil || *c.Mean[last] != lists[0].CapacityPct {
		t.Errorf("capacity column %v", c.Mean)
	}
	if c, ok := pool.Series[SeriesChecksumErrors]; !ok || *c.Max[last] == 0 {
		t.Errorf("checksum errors of the j4-errors pool: %v", c.Max)
	}
	vdevSeries := 0
	for name := range pool.Series {
		if len(name) > 5 && name[:5] == "vdev:" {
			vdevSeries++
		}
	}
	if vdevSeries == 0 {
		t.Errorf("no per-vdev counters in %v", pool.Series)
	}
	waitEvents(t, s, EventScrub, 1)
	waitEvents(t, s, EventAlert, 1)
}

// waitEvents waits for n events of kind, then a little longer to see
// that no more come.
func waitEvents(t *testing.T, s *Store, kind string, n int) {
	t.Helper()
	count := func() []Event {
		ev, err := s.Events(context.Background(), "nas1", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), kind)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(count()) < n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if ev := count(); len(ev) != n {
		t.Fatalf("%d %s events, want %d: %+v", len(ev), kind, n, ev)
	}
}

// A fresh install's store (12 h of readings, no day closed yet) answers a
// query of the last two days with every hour of it: the page's plots are
// not empty on the first day.
func TestQueryYoungStore(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	s, stop := runStore(t, b)
	defer stop()
	now := time.Now().Unix()
	t0 := now - 12*3600
	status := statusOf(t, "j4-errors.zpool-status-j.json")[0]
	lists := listOf(t, "j4-errors.zpool-list-Hp.txt")
	disk := Source(SourceDisk, smartOf(t, "../../testdata/smartctl/sata-hdd-wd140edfz-healthy.json").Serial)
	publishReadings(t, b, t0, 0, 23, status, lists)
	waitRaw(t, s, disk, 24)
	res, err := s.Query(context.Background(), "nas1", disk, time.Unix(now-48*3600, 0), time.Unix(now, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Times) < 20 || res.Times[0] > t0 || res.Times[len(res.Times)-1] < now-1800 {
		t.Fatalf("young store: %d points from %v to %v, want the 12 h of readings", len(res.Times), res.Times[0], res.Times[len(res.Times)-1])
	}
}
