package zfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openFixture(t testing.TB, dir, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(repoTestdata, dir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func collectEvents(t *testing.T, name string) []Event {
	t.Helper()
	var evs []Event
	err := parseEventsIn(openFixture(t, "zpool-events", name), time.UTC, func(e Event) error {
		evs = append(evs, e)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return evs
}

func TestEventsStateChangeNumeric(t *testing.T) {
	evs := collectEvents(t, "zol-0.6-issue-3285-statechange-config-sync.txt")
	if len(evs) != 2 {
		t.Fatalf("events = %d", len(evs))
	}
	e := evs[0]
	if e.Class != "resource.fs.zfs.statechange" || e.VdevState != "ONLINE" ||
		e.PoolGUID != "8222708011061109586" || e.VdevGUID != "3180960027959289822" {
		t.Errorf("statechange = %+v", e)
	}
	// time = 0x551237b8 0x2be6d613
	if want := time.Unix(0x551237b8, 0x2be6d613); !e.Time.Equal(want) {
		t.Errorf("time = %v, want %v", e.Time, want)
	}
	c := evs[1]
	if c.Pool != "replicator" || c.Fields["detector"] != "(embedded nvlist)" || c.Fields["scheme"] != "" {
		t.Errorf("config.sync = %+v", c)
	}
}

func TestEventsIOAndChecksum(t *testing.T) {
	evs := collectEvents(t, "zfs-2021-issue-12629-io-ereport.txt")
	if len(evs) != 1 {
		t.Fatalf("events = %d", len(evs))
	}
	e := evs[0]
	if e.Class != "ereport.fs.zfs.io" || e.Pool != "zroot" ||
		e.VdevPath != "/dev/disk/by-id/ata-ST10000NM0568-2H5110_ZHZ54DBW-part1" ||
		e.Fields["zio_err"] != "0x5" || e.Fields["vdev_spare_paths"] != "" {
		t.Errorf("io = %+v", e)
	}
	// The fragment before the first header belongs to no event.
	ck := collectEvents(t, "zol-2019-issue-8630-checksum-partial.txt")
	if len(ck) != 1 || ck[0].Class != "ereport.fs.zfs.checksum" || ck[0].Fields["vdev_cksum_errors"] != "0x1" {
		t.Errorf("checksum = %+v", ck)
	}
	// No time field: the header time is used.
	nt := collectEvents(t, "zol-0.8dev-pr-9523-statechange-string-state-partial.txt")
	if len(nt) != 1 || nt[0].VdevState != "ONLINE" ||
		!nt[0].Time.Equal(time.Date(2019, 10, 16, 12, 4, 8, 424390273, time.UTC)) {
		t.Errorf("string state = %+v", nt)
	}
}

func TestEventsStreaming(t *testing.T) {
	// Feed the fixture through a pipe line by line: each event must be
	// delivered before its successor's lines are written.
	data, err := os.ReadFile(filepath.Join(repoTestdata, "zpool-events", "zol-0.7-issue-8688-history-scrub-finish-partial.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	got := make(chan Event, 8)
	done := make(chan error, 1)
	go func() {
		done <- ParseEvents(pr, func(e Event) error { got <- e; return nil })
	}()
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		if _, err := pw.Write([]byte(l)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(l, "eid = 0x23e") && i+1 < len(lines) {
			if _, err := pw.Write([]byte(lines[i+1])); err != nil { // the blank line
				t.Fatal(err)
			}
			select {
			case e := <-got:
				if e.Fields["eid"] != "0x23e" {
					t.Errorf("first event eid = %q", e.Fields["eid"])
				}
			case <-time.After(5 * time.Second):
				t.Fatal("event not delivered at the blank line")
			}
			lines[i+1] = ""
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(got)
	var rest []Event
	for e := range got {
		rest = append(rest, e)
	}
	if len(rest) != 2 || rest[1].Class != "sysevent.fs.zfs.scrub_finish" || rest[1].Pool != "rtest" {
		t.Errorf("rest = %+v", rest)
	}
}

func TestEventsCallbackErrorStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := ParseEvents(openFixture(t, "zpool-events", "zol-0.6-issue-3285-statechange-config-sync.txt"),
		func(Event) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err=%v n=%d", err, n)
	}
}

func TestEventVdevStateNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"0x0": "UNKNOWN", "0x4": "UNAVAIL", "0x5": "FAULTED", "0x6": "DEGRADED", "0x7": "ONLINE",
		`"FAULTED" (0x5)`: "FAULTED", "0x63": "0x63",
	} {
		if got := eventVdevState(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestArcstatsLinux(t *testing.T) {
	m, err := ParseArcstats(openFixture(t, "arcstats", "linux-zol-0.6-node_exporter-fixture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if m["hits"] != 8772612 || m["c_max"] != 8367976448 || m["size"] != 1603939792 || len(m) != 91 {
		t.Errorf("hits=%d c_max=%d size=%d n=%d", m["hits"], m["c_max"], m["size"], len(m))
	}
	if _, ok := m["name"]; ok {
		t.Error("header line parsed as a value")
	}
	a := ARCFrom(m, nil)
	if a.SizeBytes != 1603939792 || a.TargetBytes != 1643208777 || a.MinBytes != 33554432 ||
		a.DemandMetadataMiss != 498170 || a.HitRatio != nil {
		t.Errorf("ARC = %+v", a)
	}
	n, err := ParseArcstats(openFixture(t, "arcstats", "linux-zol-2.2-issue-14686-excerpt.txt"))
	if err != nil || n["iohits"] != 189495 || n["evict_l2_eligible_mfu"] != 10643459072 {
		t.Errorf("2.2 excerpt: %v %v", n, err)
	}
	if _, err := ParseArcstats(strings.NewReader("garbage\n")); err == nil {
		t.Error("garbage: want error")
	}
}

func TestArcSysctlFreeBSD(t *testing.T) {
	m, err := ParseArcSysctl(openFixture(t, "arcstats", "freebsd-sysctl-node_exporter-fixture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	a := ARCFrom(m, nil)
	if a.Hits != 63068289 || a.Misses != 9306804 || a.MaxBytes != 1572864000 || a.SizeBytes != 1394856056 {
		t.Errorf("ARC = %+v", a)
	}
	x, err := ParseArcSysctl(openFixture(t, "arcstats", "freebsd-sysctl-node_exporter-pr459-excerpt.txt"))
	if err != nil || x["l2_write_not_cacheable"] != 34059952 {
		t.Errorf("excerpt: %v %v", x, err)
	}
}

func TestARCFromIntervals(t *testing.T) {
	// Two readings of the same host taken at different times are not
	// available as real data, so the second reading is derived from the real
	// fixture in code: 900 hits and 100 misses more.
	cur, err := ParseArcstats(openFixture(t, "arcstats", "linux-zol-0.6-node_exporter-fixture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]uint64{}
	for k, v := range cur {
		next[k] = v
	}
	next["hits"] += 900
	next["misses"] += 100
	a := ARCFrom(next, cur)
	if a.HitRatio == nil || *a.HitRatio != 0.9 {
		t.Errorf("hit ratio = %v", a.HitRatio)
	}
	if a.DemandHitRatio != nil || a.L2HitRatio != nil {
		t.Errorf("no demand/L2 activity must give no ratio: %v %v", a.DemandHitRatio, a.L2HitRatio)
	}
	// A module reload resets counters: no ratio for that interval.
	reset := map[string]uint64{"hits": 5, "misses": 1}
	if r := ARCFrom(reset, cur); r.HitRatio != nil {
		t.Errorf("reset interval ratio = %v", *r.HitRatio)
	}
}

func TestParseListFixture(t *testing.T) {
	pl, err := ParseList(openFixture(t, "zpool-list", "linux-issue-si-802-list-vHPp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pl) != 1 {
		t.Fatalf("pools = %+v", pl)
	}
	p := pl[0]
	if p.Name != "pool_0" || p.Health != StateOnline || p.SizeBytes != 1992864825344 ||
		p.AllocBytes != 779701190656 || p.FreeBytes != 1213163634688 || p.CapacityPct != 39 ||
		p.FragmentPct == nil || *p.FragmentPct != 0 {
		t.Errorf("list = %+v", p)
	}
	if _, err := ParseListColumns(strings.NewReader("a\tb\n"), []string{"name", "health", "capacity"}); err == nil {
		t.Error("short line: want error")
	}
}

// capturedFile opens testdata/captured/zfs-2.3.2/name, skipping when the
// capture is not there yet.
func capturedFile(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(repoTestdata, "captured", "zfs-2.3.2", name))
	if err != nil {
		t.Skip("capture missing:", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestCapturedList(t *testing.T) {
	// The captures are re-taken from time to time, so values are checked
	// against each other (-Hp vs -H -o of the same step), not pinned.
	for _, step := range []string{"a", "b1-offline", "b4-online"} {
		pl, err := ParseList(capturedFile(t, step+".zpool-list-Hp.txt"))
		if err != nil || len(pl) != 2 || pl[1].Name != "vault" {
			t.Fatalf("%s -Hp: %+v %v", step, pl, err)
		}
		v := pl[1]
		if v.SizeBytes == 0 || v.AllocBytes+v.FreeBytes != v.SizeBytes || v.FragmentPct == nil {
			t.Errorf("%s vault = %+v", step, v)
		}
		ho, err := ParseListColumns(capturedFile(t, step+".zpool-list-H-o.txt"), []string{"name", "health", "capacity"})
		if err != nil || len(ho) != 2 || ho[1].Health != v.Health || ho[1].CapacityPct != v.CapacityPct {
			t.Errorf("%s -o: %+v vs %+v %v", step, ho, v, err)
		}
	}
	deg, err := ParseListColumns(capturedFile(t, "b1-offline.zpool-list-H-o.txt"), []string{"name", "health", "capacity"})
	if err != nil || len(deg) != 2 || deg[1].Health != StateDegraded {
		t.Errorf("b1 health: %+v %v", deg, err)
	}
}

func TestCapturedDatasets(t *testing.T) {
	ds, err := ParseDatasets(capturedFile(t, "a.zfs-list-Hp.txt"))
	if err != nil || len(ds) != 5 {
		t.Fatalf("datasets: %+v %v", ds, err)
	}
	byName := map[string]Dataset{}
	for _, d := range ds {
		byName[d.Name] = d
	}
	if b := byName["vault/backup"]; b.QuotaBytes != 1<<30 || b.RefquotaBytes != 0 || b.UsedBytes == 0 {
		t.Errorf("backup = %+v", b)
	}
	if s := byName["vault/storage"]; s.RefquotaBytes != 512<<20 || s.QuotaBytes != 0 {
		t.Errorf("storage = %+v", s)
	}
}

func TestCapturedArcstats(t *testing.T) {
	m, err := ParseArcstats(capturedFile(t, "a.arcstats.txt"))
	if err != nil {
		t.Fatal(err)
	}
	a := ARCFrom(m, nil)
	if a.SizeBytes == 0 || a.MaxBytes == 0 || a.Hits == 0 || a.SizeBytes != m["size"] {
		t.Errorf("ARC = %+v", a)
	}
}
