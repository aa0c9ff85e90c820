package history

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
)

// What the writer must not store: a fact whose envelope names another host
// than its subject (an agent speaking for another), garbage, a disk in
// standby (no fresh values), and a second fact in a raw slot already taken.
func TestWriterSkips(t *testing.T) {
	b := openBus(t, "")
	defer b.Close()
	s := openStore(t, b, testConfig())
	ctx := context.Background()
	sim := newSimulation(t, s, "nas1")
	w := sim.w
	at := time.Unix(simStart, 0)
	list := facts.CapacityData{Pools: sim.lists[:1]}

	w.ingest(ctx, factSubject("nas2", facts.ZpoolCapacity.Name()), wrap(t, facts.ZpoolCapacity.Name(), "nas1", at, list))
	w.ingest(ctx, factSubject("nas1", facts.ZpoolCapacity.Name()), []byte(`{"schema":"zwatch.v1.zpool.capacity","data":{"pools":[{"name":`))
	w.ingest(ctx, factSubject("nas1", facts.ZpoolCapacity.Name()), []byte(`\x00\xff`))
	w.ingest(ctx, factSubject("nas1", facts.ZpoolCapacity.Name()), wrap(t, facts.ZpoolStatus.Name(), "nas1", at, list))
	standby := *sim.disks[0]
	standby.InStandby = true
	w.ingest(ctx, factSubject("nas1", facts.Smart.Name(), standby.Serial), wrap(t, facts.Smart.Name(), "nas1", at, &standby))
	w.flush(ctx)
	if n, err := s.Size(ctx); err != nil || n != 0 {
		t.Fatalf("stored %d bytes (%v) from facts that should add nothing", n, err)
	}

	subject := factSubject("nas1", facts.ZpoolCapacity.Name())
	for _, off := range []int64{0, 10, 290, 299, 300, 301, 599, 600} {
		w.ingest(ctx, subject, wrap(t, facts.ZpoolCapacity.Name(), "nas1", at.Add(time.Duration(off)*time.Second), list))
	}
	w.flush(ctx)
	pts, err := s.tierPoints(ctx, "nas1", Source(SourcePool, "tank"), TierRaw, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var times []int64
	for _, p := range pts {
		times = append(times, p.T-simStart)
	}
	if len(times) != 3 || times[0] != 0 || times[1] != 300 || times[2] != 600 {
		t.Errorf("raw points at %v s, want one per 5-minute slot: [0 300 600]", times)
	}
}

// The part of a SMART report the history reads is the report's: a field
// renamed in smart.Report would otherwise leave the disk series empty.
func TestSmartReadingIsPartOfTheReport(t *testing.T) {
	if err := facts.CheckPart[smartReading, smart.Report](); err != nil {
		t.Error(err)
	}
	if got := factSubjects(); !slices.Equal(got, []string{"zwatch.v1.*.zpool.capacity", "zwatch.v1.*.zpool.status", "zwatch.v1.*.smart.>", "zwatch.v1.*.incident.action"}) {
		t.Errorf("factSubjects() = %v", got)
	}
}

// Scans from real zpool status outputs: a finished resilver and a finished
// scrub are events, a scrub in progress or paused is none.
func TestScanEventsFromCapturedStatus(t *testing.T) {
	b := openBus(t, "")
	defer b.Close()
	s := openStore(t, b, testConfig())
	ctx := context.Background()
	w := newWriter(s)
	at := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	for i, name := range []string{"j1-scrubbing", "j2-paused", "e3-replaced", "j3-scrubbed", "j3-scrubbed"} {
		pools := statusOf(t, name+".zpool-status-j.json")
		w.ingest(ctx, factSubject("nas1", facts.ZpoolStatus.Name()), wrap(t, facts.ZpoolStatus.Name(), "nas1", at.Add(time.Duration(i)*time.Hour), facts.StatusData{Source: "json", Pools: pools}))
	}
	w.flush(ctx)
	ev, err := s.Events(ctx, "nas1", at.Add(-30*24*time.Hour), at.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range ev {
		kinds[e.Kind]++
		if e.Pool == "" || e.Start == nil || e.State != "finished" {
			t.Errorf("event %+v", e)
		}
	}
	if kinds[EventResilver] != 1 || kinds[EventScrub] != 1 || len(ev) != 2 {
		t.Errorf("events %+v, want the resilver of e3-replaced and the scrub of j3-scrubbed once each", ev)
	}
}
