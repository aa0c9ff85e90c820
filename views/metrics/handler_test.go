package metrics

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/views/statusview"
)

// fixedView answers with what it holds; block makes All wait for the
// scrape's context, as a bus that does not answer would.
type fixedView struct {
	hosts     []statusview.Host
	outbox    []statusview.ChannelProgress
	hostsErr  error
	outboxErr error
	block     chan struct{} // closed when a blocked All started
	once      sync.Once
	entered   atomic.Int32
}

func (v *fixedView) All(ctx context.Context) ([]statusview.Host, error) {
	if v.block != nil {
		v.entered.Add(1)
		v.once.Do(func() { close(v.block) })
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return v.hosts, v.hostsErr
}

func (v *fixedView) Outbox(context.Context) ([]statusview.ChannelProgress, error) {
	return v.outbox, v.outboxErr
}

func (v *fixedView) LocalHost() string { return "nas" }

func ptr[T any](v T) *T { return &v }

// degradedHost is vault as zpool status showed it in the b1-offline
// capture (raidz2-0 DEGRADED, one disk OFFLINE), with a resilver running
// and two rows of the same name, which zpool can print.
func degradedHost() statusview.Host {
	at := time.Unix(1764590000, 0)
	end := time.Unix(1764500000, 0)
	vdevs := []statusview.Vdev{
		{Name: "vault", Type: "root", State: zfs.StateDegraded, Class: "data"},
		{Name: "raidz2-0", Type: "raidz", State: zfs.StateDegraded, Class: "data", Depth: 1},
		{Name: "virtio-ZWV0001", Type: "disk", State: zfs.StateOffline, Class: "data", Depth: 2, Serial: "ZWV0001", Bay: "pci 0000:00:05.0", Problem: true},
		{Name: "ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001", Type: "disk", State: zfs.StateOnline, Class: "data", Depth: 2, ReadErrors: 3, ChecksumErrors: 12, Serial: "WD-WCC7K0000001"},
		{Name: "ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001", Type: "disk", State: zfs.StateOnline, Class: "data", Depth: 2},
	}
	return statusview.Host{
		Host: "nas", Version: "1.2.3", LastHeartbeat: &at,
		Collectors: map[string]facts.CollectorHealth{
			"zpool_status": {Interval: time.Minute, LastOK: &at, LastDuration: 150 * time.Millisecond, Runs: 10, Errors: 2},
			"smart":        {Interval: 30 * time.Minute, Disabled: "smartctl not found"},
			"kernel_log":   {},
		},
		Pools: []statusview.Pool{{
			Name: "vault", State: zfs.StateDegraded, SizeBytes: 1000, AllocBytes: 250, FreeBytes: 750, CapacityPct: 25, FragmentPct: ptr(3.0),
			Margin: ptr(1), StatusAt: &at, CapacityAt: &at, LastScrub: &end,
			Scan:  zfs.Scan{Function: zfs.ScanResilver, State: zfs.ScanStateScanning, ExaminedBytes: 400, IssuedBytes: 300, TotalBytes: 800, PercentDone: 37.5, RateBytes: 20, ETASeconds: 60},
			Vdevs: vdevs,
		}, {
			Name: "old", State: "SPLIT", StatusAt: &at,
			Scan: zfs.Scan{Function: zfs.ScanScrub, State: zfs.ScanStateFinished, End: &end, Errors: 2, RepairedBytes: 4096},
		}},
		ARC:   &zfs.ARC{SizeBytes: 1 << 30, Hits: 900, Misses: 100},
		ARCAt: &at,
		Alerts: []alert.Alert{{Name: "PoolDegraded", Severity: alert.Critical, State: alert.Firing}, {Name: "DiskErrors", Severity: alert.Warning, State: alert.Firing}, {Name: "DiskErrors", Severity: alert.Warning, State: alert.Firing,
			Ack: &alert.Ack{By: "alice", Source: "cli", Severity: alert.Warning}}},
	}
}

func TestScrapeDegradedPool(t *testing.T) {
	v := &fixedView{hosts: []statusview.Host{degradedHost()}, outbox: []statusview.ChannelProgress{{Channel: "phone", Type: "ntfy", AckFloor: 41, Backlog: 2, DeadLetters: 1}}}
	code, text := scrape(t, Handler(Options{View: v, Version: "1.2.3"}), nil)
	if code != http.StatusOK {
		t.Fatalf("status %d\n%s", code, text)
	}
	promtoolCheck(t, text)
	fams := families(t, text)
	vault := map[string]string{"host": "nas", "pool": "vault"}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"zfs_pool_health", vault, 1},
		{"zwatch_pool_state", map[string]string{"pool": "vault", "state": "degraded"}, 1},
		{"zwatch_pool_state", map[string]string{"pool": "vault", "state": "online"}, 0},
		{"zwatch_pool_state", map[string]string{"pool": "old", "state": "split"}, 1},
		{"zfs_pool_allocated_bytes", vault, 250},
		{"zfs_pool_capacity_ratio", vault, 0.25},
		{"zfs_pool_fragmentation_ratio", vault, 0.03},
		{"zwatch_pool_redundancy_margin", vault, 1},
		{"zfs_pool_scrub_scanned_bytes", vault, 400},
		{"zwatch_pool_scan_progress_ratio", map[string]string{"pool": "vault", "function": "resilver"}, 0.375},
		{"zwatch_pool_scan_info", map[string]string{"pool": "vault", "function": "resilver", "state": "scanning"}, 1},
		{"zfs_pool_scrub_last_completed_timestamp_seconds", vault, 0},
		{"zfs_pool_scrub_last_completed_timestamp_seconds", map[string]string{"pool": "old"}, 1764500000},
		{"zfs_pool_scrub_errors", map[string]string{"pool": "old"}, 2},
		{"zwatch_vdev_health", map[string]string{"vdev": "virtio-ZWV0001"}, 3},
		{"zwatch_vdev_checksum_errors", map[string]string{"vdev": "ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001"}, 12},
		{"zwatch_vdev_disk_info", map[string]string{"vdev": "virtio-ZWV0001", "serial": "ZWV0001", "bay": "pci 0000:00:05.0"}, 1},
		{"zwatch_alerts", map[string]string{"alertname": "DiskErrors", "severity": "warning", "state": "firing"}, 2},
		{"zwatch_alerts_acknowledged", map[string]string{"alertname": "DiskErrors", "severity": "warning"}, 1},
		{"zwatch_outbox_backlog", map[string]string{"channel": "phone", "type": "ntfy"}, 2},
		{"zwatch_outbox_dead_letters", map[string]string{"channel": "phone"}, 1},
		{"zwatch_collector_errors_total", map[string]string{"collector": "zpool_status"}, 2},
		{"zwatch_collector_last_duration_seconds", map[string]string{"collector": "zpool_status"}, 0.15},
		{"zwatch_collector_up", map[string]string{"collector": "smart"}, 0},
		{"zwatch_collector_disabled", map[string]string{"collector": "smart"}, 1},
		{"zwatch_collector_up", map[string]string{"collector": "kernel_log"}, 1},
		{"zwatch_collector_up", map[string]string{"collector": "zpool_status"}, 1},
		{"zwatch_arc_hits_total", map[string]string{"host": "nas"}, 900},
		{"zwatch_scrape_error", map[string]string{"part": "hosts"}, 0},
		{"zwatch_build_info", map[string]string{"version": "1.2.3"}, 1},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if _, ok := fams["zfs_pool_health"]; !ok || len(series(fams, "zfs_pool_health", map[string]string{"pool": "old"})) != 0 {
		t.Error("a SPLIT pool has no zfs_exporter health code and must not get one")
	}
	for _, want := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := fams[want]; !ok {
			t.Errorf("%s missing; have %v", want, names(fams))
		}
	}
}

func TestScrapeReadFailureIsFlaggedNotServedHalf(t *testing.T) {
	v := &fixedView{hostsErr: errors.New("facts stream zwatch-facts: nats: timeout"), outbox: []statusview.ChannelProgress{{Channel: "mail", Type: "smtp"}}}
	code, text := scrape(t, Handler(Options{View: v}), nil)
	if code != http.StatusOK {
		t.Fatalf("status %d, want 200 with the error flagged", code)
	}
	promtoolCheck(t, text)
	fams := families(t, text)
	if got := value(t, fams, "zwatch_scrape_error", map[string]string{"part": "hosts"}); got != 1 {
		t.Errorf("zwatch_scrape_error{part=hosts} = %v, want 1", got)
	}
	if got := value(t, fams, "zwatch_scrape_error", map[string]string{"part": "outbox"}); got != 0 {
		t.Errorf("zwatch_scrape_error{part=outbox} = %v, want 0", got)
	}
	for n := range fams {
		if strings.HasPrefix(n, "zfs_") || strings.HasPrefix(n, "smartctl_") || strings.HasPrefix(n, "zwatch_host") {
			t.Errorf("%s served although the hosts could not be read", n)
		}
	}
	if _, ok := fams["zwatch_outbox_backlog"]; !ok {
		t.Error("the outbox was read; its metrics belong in the scrape")
	}
}

func TestScrapeHonoursTheScrapersTimeout(t *testing.T) {
	v := &fixedView{block: make(chan struct{})}
	h := Handler(Options{View: v, Timeout: time.Minute})
	start := time.Now()
	code, text := scrape(t, h, http.Header{"X-Prometheus-Scrape-Timeout-Seconds": {"1.5"}})
	took := time.Since(start)
	if code != http.StatusOK || took > 1500*time.Millisecond {
		t.Fatalf("status %d after %s; want 200 before the scraper's 1.5 s run out", code, took)
	}
	if got := value(t, families(t, text), "zwatch_scrape_error", map[string]string{"part": "hosts"}); got != 1 {
		t.Errorf("a timed-out read must be flagged, got %v", got)
	}
}

func TestScrapesBeyondTheLimitAreRefused(t *testing.T) {
	v := &fixedView{block: make(chan struct{})}
	h := Handler(Options{View: v, Timeout: 2 * time.Second})
	var wg sync.WaitGroup
	for range maxConcurrentScrapes {
		wg.Add(1)
		go func() { defer wg.Done(); scrape(t, h, nil) }()
	}
	<-v.block
	for v.entered.Load() < maxConcurrentScrapes {
		time.Sleep(5 * time.Millisecond)
	}
	code, _ := scrape(t, h, nil)
	if code != http.StatusServiceUnavailable {
		t.Errorf("scrape %d beyond %d at once: status %d, want 503", maxConcurrentScrapes+1, maxConcurrentScrapes, code)
	}
	wg.Wait()
}
