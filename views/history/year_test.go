package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// The simulated machine: 12 disks read every 30 minutes, 3 pools whose
// capacity is read every 10 seconds and status every minute, for 400 days.
const (
	simDays        = 400
	simDisks       = 12
	smartEvery     = 1800
	capacityEvery  = 10
	statusEvery    = 60
	scrubEveryDays = 30
)

var simStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

var simPools = []string{"tank", "backup", "scratch"}

// simTemp is disk i's temperature at t: a daily swing over a ten-day
// drift, whole degrees as smartctl reports them.
func simTemp(i int, t int64) int {
	return 25 + i + int((t/3600)%24)/2 + int((t/86400)%10)
}

// simAlloc is a pool's allocated bytes at t: it grows a little each slot.
func simAlloc(base uint64, p int, t int64) uint64 {
	return base + uint64(p+1)*uint64((t-simStart)/300)*4096
}

// lastScrubEnd is the end of the newest monthly scrub before t, nil
// before the first.
func lastScrubEnd(t int64) *time.Time {
	n := (t - simStart - 7200) / (scrubEveryDays * 86400)
	if t-simStart < 7200+42 {
		return nil
	}
	end := time.Unix(simStart+n*scrubEveryDays*86400+7200+42, 0).UTC()
	if end.Unix() > t {
		n--
		if n < 0 {
			return nil
		}
		end = time.Unix(simStart+n*scrubEveryDays*86400+7200+42, 0).UTC()
	}
	return &end
}

// restamper re-uses one envelope per raw slot: facts between two slots
// differ from the slot's first only in collected_at (the test's signal
// moves once per slot), so only the time is rewritten.
type restamper struct {
	slot  int64
	env   []byte
	stamp []byte
}

func (r *restamper) envelope(t int64, interval int64, build func() []byte) []byte {
	stamp := []byte(time.Unix(t, 0).UTC().Format(time.RFC3339Nano))
	if r.env == nil || t/interval != r.slot {
		r.slot, r.env, r.stamp = t/interval, build(), stamp
		return r.env
	}
	return bytes.Replace(r.env, r.stamp, stamp, 1)
}

type simulation struct {
	t        testing.TB
	w        *writer
	interval int64
	host     string
	disks    []*smart.Report
	lists    []zfs.PoolList
	status   []*zfs.Pool
	capStamp restamper
	stStamp  restamper
	facts    int
}

func newSimulation(t testing.TB, s *Store, host string) *simulation {
	sim := &simulation{t: t, w: newWriter(s), host: host, interval: int64(s.cfg.RawInterval.D() / time.Second)}
	ata := smartOf(t, "../../testdata/smartctl/sata-hdd-wd140edfz-healthy.json")
	nvme := smartOf(t, "../../testdata/smartctl/nvme-intel-660p-healthy.json")
	for i := range simDisks {
		var r smart.Report
		src := ata
		if i >= simDisks-2 {
			src = nvme
		}
		raw, _ := json.Marshal(src)
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		r.Serial = fmt.Sprintf("SIM%02d-%s", i, src.Serial)
		sim.disks = append(sim.disks, &r)
	}
	base := listOf(t, "j4-errors.zpool-list-Hp.txt")[0]
	st := statusOf(t, "j3-scrubbed.zpool-status-j.json")[0]
	for _, name := range simPools {
		l := base
		l.Name = name
		sim.lists = append(sim.lists, l)
		var p zfs.Pool
		raw, _ := json.Marshal(st)
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		p.Name = name
		sim.status = append(sim.status, &p)
	}
	return sim
}

// run feeds the writer every fact from..to (Unix seconds, from included).
// The facts are made on another goroutine, so that making them (the
// test's cost) and storing them (the writer's) overlap.
func (sim *simulation) run(ctx context.Context, from, to int64) {
	facts := make(chan fact, 1024)
	go func() {
		defer close(facts)
		for t := from; t < to; t += capacityEvery {
			facts <- sim.capacity(t)
			if t%statusEvery == 0 {
				facts <- sim.statusFact(t)
			}
			if t%smartEvery == 0 {
				for i := range sim.disks {
					facts <- sim.smartFact(i, t)
				}
			}
		}
	}()
	for f := range facts {
		sim.w.ingest(ctx, f.subject, f.data)
		sim.facts++
	}
	sim.w.flush(ctx)
}

// fact is one message as the facts stream delivers it.
type fact struct {
	subject string
	data    []byte
}

func (sim *simulation) capacity(t int64) fact {
	env := sim.capStamp.envelope(t, sim.interval, func() []byte {
		pools := make([]zfs.PoolList, len(sim.lists))
		for p, l := range sim.lists {
			l.AllocBytes = simAlloc(l.AllocBytes, p, t)
			l.FreeBytes = l.SizeBytes - l.AllocBytes
			l.CapacityPct = math.Round(float64(l.AllocBytes)*10000/float64(l.SizeBytes)) / 100
			pools[p] = l
		}
		return wrap(sim.t, facts.ZpoolCapacity.Name(), sim.host, time.Unix(t, 0), facts.CapacityData{Pools: pools})
	})
	return fact{factSubject(sim.host, facts.ZpoolCapacity.Name()), env}
}

func (sim *simulation) statusFact(t int64) fact {
	env := sim.stStamp.envelope(t, sim.interval, func() []byte {
		end := lastScrubEnd(t)
		for _, p := range sim.status {
			if end == nil {
				p.Scan = zfs.Scan{Function: zfs.ScanNone, State: zfs.ScanStateNone}
				continue
			}
			start := end.Add(-42 * time.Second)
			p.Scan.Function, p.Scan.State, p.Scan.Start, p.Scan.End = zfs.ScanScrub, zfs.ScanStateFinished, &start, end
		}
		return wrap(sim.t, facts.ZpoolStatus.Name(), sim.host, time.Unix(t, 0), facts.StatusData{Source: "json", Pools: sim.status})
	})
	return fact{factSubject(sim.host, facts.ZpoolStatus.Name()), env}
}

func (sim *simulation) smartFact(i int, t int64) fact {
	r := sim.disks[i]
	r.TemperatureC = ptr(simTemp(i, t))
	r.PowerOnHours = ptr(uint64(10000 + (t-simStart)/3600))
	return fact{factSubject(sim.host, facts.Smart.Name(), r.Serial), wrap(sim.t, facts.Smart.Name(), sim.host, time.Unix(t, 0), r)}
}

// notify sends a notification through the writer as the alerts stream
// carries it.
func (sim *simulation) notify(ctx context.Context, n alert.Notification) {
	sim.w.ingest(ctx, factSubject(sim.host, "alert"), wrap(sim.t, "notification", sim.host, n.Created, n))
}

// TestSimulatedYear feeds 400 days of facts at their real intervals
// through the writer into a real embedded JetStream, then checks what a
// year costs on disk and that the aggregates are exact.
func TestSimulatedYear(t *testing.T) {
	days := simDays
	if testing.Short() && os.Getenv("ZW_HISTORY_YEAR") == "" {
		days = 45 // still past the hourly tier's 30 days
	}
	dir := t.TempDir()
	b := openBus(t, dir)
	defer b.Close()
	s := openStore(t, b, testConfig())
	ctx := context.Background()
	sim := newSimulation(t, s, "nas1")
	began := time.Now()
	end := simStart + int64(days)*86400
	for day := range days {
		from := simStart + int64(day)*86400
		sim.run(ctx, from, from+86400)
		if day%10 == 3 {
			sim.alertDay(ctx, from)
		}
	}
	sim.w.flush(ctx)
	took := time.Since(began)

	size, err := s.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := int64(0)
	for _, name := range []string{StreamRaw, StreamHour, StreamDay, StreamEvents} {
		n := dirSize(t, filepath.Join(dir, "jetstream", "jetstream", "$G", "streams", name))
		info, err := mustStream(t, s, name).Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d messages, %.2f MB held, %.2f MB on disk", name, info.State.Msgs, float64(info.State.Bytes)/1e6, float64(n)/1e6)
		onDisk += n
	}
	t.Logf("%d days, %d facts in %s (%.2f µs a fact); history streams hold %.2f MB, %.2f MB on disk",
		days, sim.facts, took.Round(time.Millisecond), float64(took.Microseconds())/float64(sim.facts), float64(size)/1e6, float64(onDisk)/1e6)
	if onDisk > 20e6 || size > 20e6 {
		t.Errorf("a simulated year takes %d bytes (%d on disk), want under 20 MB", size, onDisk)
	}

	checkDiskAggregates(t, s, sim, end)
	checkPoolTiers(t, s, end)
	checkScrubEvents(t, s, end, days)
	checkAlertEvents(t, s, end, days)
}

func mustStream(t testing.TB, s *Store, name string) jetstream.Stream {
	t.Helper()
	st, err := s.js.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// alertDay fires an alert and resolves it the next morning, sends the
// firing again as a reminder, and a test and a canary notification.
func (sim *simulation) alertDay(ctx context.Context, day int64) {
	at := time.Unix(day+3600, 0).UTC()
	resolved := at.Add(20 * time.Hour)
	a := alert.Alert{Name: "SmartTemperature", Severity: alert.Severity("warning"), State: alert.Firing,
		Labels: map[string]string{"pool": "tank"}, Fingerprint: fmt.Sprintf("fp%d", day), Summary: "disk hot", StartsAt: at}
	sim.notify(ctx, alert.Notification{ID: fmt.Sprintf("n%d", day), Host: sim.host, Status: alert.Firing, Alerts: []alert.Alert{a}, Created: at})
	sim.notify(ctx, alert.Notification{ID: fmt.Sprintf("n%d-again", day), Host: sim.host, Status: alert.Firing, Alerts: []alert.Alert{a}, Created: at.Add(4 * time.Hour)})
	sim.notify(ctx, alert.Notification{ID: "test", Host: sim.host, Test: true, Status: alert.Firing, Alerts: []alert.Alert{a}, Created: at})
	sim.notify(ctx, alert.Notification{ID: delivery.CanaryPrefix + "x", Host: sim.host, Status: alert.Firing, Alerts: []alert.Alert{a}, Created: at})
	r := a
	r.State, r.EndsAt = alert.Resolved, &resolved
	sim.notify(ctx, alert.Notification{ID: fmt.Sprintf("n%d-ok", day), Host: sim.host, Status: alert.Resolved, Alerts: []alert.Alert{r}, Created: resolved})
	sim.w.flush(ctx)
}

// expectedTemp is the exact min, max and mean of disk i's readings in
// [from, from+secs).
func expectedTemp(i int, from, secs int64) (mn, mx, mean float64) {
	mn, mx = math.Inf(1), math.Inf(-1)
	var sum float64
	n := 0
	for t := from; t < from+secs; t += smartEvery {
		v := float64(simTemp(i, t))
		mn, mx, sum = min(mn, v), max(mx, v), sum+v
		n++
	}
	return mn, mx, sum / float64(n)
}

func checkDiskAggregates(t *testing.T, s *Store, sim *simulation, end int64) {
	ctx := context.Background()
	const disk = 3
	src := Source(SourceDisk, sim.disks[disk].Serial)
	res, err := s.Query(ctx, "nas1", src, time.Unix(simStart, 0), time.Unix(end, 0))
	if err != nil {
		t.Fatal(err)
	}
	col, ok := res.Series[SeriesTemperature]
	if !ok {
		t.Fatalf("no %s in %v", SeriesTemperature, res.Series)
	}
	counts := map[int32]int{}
	for i, ts := range res.Times {
		p := res.Periods[i]
		counts[p]++
		secs := int64(p)
		if p == 0 {
			secs = smartEvery
		}
		mn, mx, mean := expectedTemp(disk, ts, secs)
		if *col.Min[i] != mn || *col.Max[i] != mx || math.Abs(*col.Mean[i]-mean) > 1e-9 {
			t.Fatalf("%s at %s (period %ds): min %v max %v mean %v, want %v %v %v",
				src, time.Unix(ts, 0).UTC(), p, *col.Min[i], *col.Max[i], *col.Mean[i], mn, mx, mean)
		}
		if i > 0 && ts < res.Times[i-1]+int64(res.Periods[i-1]) {
			t.Fatalf("points overlap at %s", time.Unix(ts, 0).UTC())
		}
	}
	t.Logf("%s over the whole range: %d daily, %d hourly, %d raw points", src, counts[86400], counts[3600], counts[0])
	if counts[86400] == 0 || counts[0] == 0 {
		t.Errorf("want daily and raw points, got %v", counts)
	}
	if _, ok := res.Series[SeriesPowerOnHours]; !ok {
		t.Error("no power-on hours")
	}
	nvme := Source(SourceDisk, sim.disks[simDisks-1].Serial)
	nres, err := s.Query(ctx, "nas1", nvme, time.Unix(end-86400, 0), time.Unix(end, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{SeriesMediaErrors, SeriesAvailableSpare, SeriesPercentageUsed} {
		if _, ok := nres.Series[name]; !ok {
			t.Errorf("NVMe disk has no %s", name)
		}
	}
}

func checkPoolTiers(t *testing.T, s *Store, end int64) {
	ctx := context.Background()
	res, err := s.Query(ctx, "nas1", Source(SourcePool, "tank"), time.Unix(simStart, 0), time.Unix(end, 0))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int32]int{}
	for _, p := range res.Periods {
		counts[p]++
	}
	t.Logf("pool/tank: %d daily, %d hourly, %d raw points", counts[86400], counts[3600], counts[0])
	// Raw points cover raw_for (7d at 5m), hourly hourly_for (30d).
	if counts[0] < 2000 || counts[3600] < 22*24 || counts[86400] == 0 {
		t.Errorf("tiers of pool/tank: %v", counts)
	}
	for _, name := range []string{SeriesCapacity, SeriesAllocBytes, SeriesSizeBytes, SeriesFragmentation, SeriesReadErrors, SeriesChecksumErrors} {
		if _, ok := res.Series[name]; !ok {
			t.Errorf("pool/tank has no %s", name)
		}
	}
	// The last raw point's allocation is the last slot's.
	last := len(res.Times) - 1
	want := float64(simAlloc(listOf(t, "j4-errors.zpool-list-Hp.txt")[0].AllocBytes, 0, res.Times[last]))
	if got := *res.Series[SeriesAllocBytes].Mean[last]; got != want {
		t.Errorf("last alloc %v, want %v", got, want)
	}
	sources, err := s.Sources(ctx, "nas1")
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != simDisks+len(simPools) {
		t.Errorf("sources %v, want %d", sources, simDisks+len(simPools))
	}
}

func checkScrubEvents(t *testing.T, s *Store, end int64, days int) {
	ev, err := s.Events(context.Background(), "nas1", time.Unix(simStart, 0), time.Unix(end, 0), EventScrub)
	if err != nil {
		t.Fatal(err)
	}
	want := len(simPools) * ((days-1)/scrubEveryDays + 1)
	if len(ev) != want {
		t.Fatalf("%d scrub events, want %d (one per pool and scrub)", len(ev), want)
	}
	if e := ev[0]; e.Pool == "" || e.State != zfs.ScanStateFinished || e.Start == nil || e.At.Sub(*e.Start) != 42*time.Second {
		t.Errorf("scrub event %+v", e)
	}
}

func checkAlertEvents(t *testing.T, s *Store, end int64, days int) {
	ev, err := s.Events(context.Background(), "nas1", time.Unix(simStart, 0), time.Unix(end, 0), EventAlert)
	if err != nil {
		t.Fatal(err)
	}
	alertDays := 0
	for day := range days {
		if day%10 == 3 {
			alertDays++
		}
	}
	if len(ev) != 2*alertDays {
		t.Fatalf("%d alert events, want %d (a firing and a resolved a day, no test, canary or reminder)", len(ev), 2*alertDays)
	}
	if ev[0].Status != string(alert.Firing) || ev[1].Status != string(alert.Resolved) || ev[0].Alert != "SmartTemperature" || ev[0].Pool != "tank" {
		t.Errorf("alert events %+v %+v", ev[0], ev[1])
	}
}
