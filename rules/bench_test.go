package rules

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
)

// benchMix is a day's message mix of a 4-disk NAS, from real outputs:
// zpool status (raidz1, one disk UNAVAIL), zpool list, a SMART report, a
// heartbeat; hosts vary so state stays realistic for many machines.
func benchMix(b *testing.B, hosts int) []bus.Envelope {
	status := statusPools(b, "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt")
	r := smartReport(b, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	var out []bus.Envelope
	for h := 0; h < hosts; h++ {
		host := fmt.Sprintf("nas%d", h)
		wrap := func(kind, coll string, data any) bus.Envelope {
			msg, err := bus.Wrap(kind, host, coll, t0, data)
			if err != nil {
				b.Fatal(err)
			}
			env, err := bus.Decode(msg, kind, nil)
			if err != nil {
				b.Fatal(err)
			}
			return env
		}
		out = append(out,
			wrap(facts.ZpoolStatus.Name(), "zpool_status", facts.StatusData{Source: "text", Pools: status}),
			wrap(facts.ZpoolCapacity.Name(), "zpool_list", facts.CapacityData{Pools: []zfs.PoolList{{Name: "upool", CapacityPct: 41}}}),
			wrap(facts.Smart.Name(), "smart", r),
			wrap(facts.Heartbeat.Name(), "zwatch", facts.HeartbeatData{Collectors: map[string]facts.CollectorHealth{"zpool_status": {Interval: time.Minute}}}),
		)
	}
	return out
}

// BenchmarkObserve: messages evaluated per second on one core (run with
// -cpu 1), decoding included.
func BenchmarkObserve(b *testing.B) {
	mix := benchMix(b, 16)
	e := newTestEngine()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		if err := e.Observe(mix[i%len(mix)], now); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 0 {
			e.Tick(now)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	// The machine may be shared: CPU time says what one core does.
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "msgs/cpu-s")
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkObserveKind: the same per kind of message.
func BenchmarkObserveKind(b *testing.B) {
	mix := benchMix(b, 1)
	for i, name := range []string{"status", "capacity", "smart", "heartbeat"} {
		b.Run(name, func(b *testing.B) {
			e := newTestEngine()
			b.ReportAllocs()
			cpu0 := cpuTime()
			for n := 0; n < b.N; n++ {
				if err := e.Observe(mix[i], t0.Add(time.Duration(n)*time.Millisecond)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "msgs/cpu-s")
		})
	}
}

// BenchmarkLatency: from a status message showing a disk UNAVAIL to the
// notification, with group_wait 0 (the wait itself is configuration, not
// evaluation cost).
func BenchmarkLatency(b *testing.B) {
	healthy := statusPools(b, "zpool-status/freebsd-raidz1-gpt-label-online.txt")
	bad := statusPools(b, "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt")
	envH := poolsEnv(b, healthy, t0)
	envB := poolsEnv(b, bad, t0)
	e := newTestEngine(func(c *configRules) { c.GroupWait = 0 })
	b.ResetTimer()
	var total time.Duration
	for n := 0; n < b.N; n++ {
		now := t0.Add(time.Duration(n) * time.Minute)
		b.StopTimer()
		e.Observe(envH, now)
		e.Tick(now)
		b.StartTimer()
		start := time.Now()
		e.Observe(envB, now)
		ns := e.Tick(now)
		total += time.Since(start)
		if len(ns) != 1 {
			b.Fatalf("%d notifications", len(ns))
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/alert")
}

// BenchmarkObserveChanged: every status and SMART message differs from the
// last (counters and temperature move), so each is decoded and judged in full.
func BenchmarkObserveChanged(b *testing.B) {
	status := statusPools(b, "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt")
	r := smartReport(b, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	var mix []bus.Envelope
	for i := 0; i < 64; i++ {
		leafNamed(status, "gpt/usb1").ChecksumErrors = uint64(i)
		temp := 30 + i%20
		r.TemperatureC = &temp
		mix = append(mix, poolsEnv(b, status, t0), smartEnv(b, r, t0),
			capEnv(b, []zfs.PoolList{{Name: "upool", CapacityPct: 41}}, nil, t0))
	}
	e := newTestEngine()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		if err := e.Observe(mix[i%len(mix)], now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "msgs/cpu-s")
}

// BenchmarkObserveStatusDisks: a host with 12 disks known by SMART (none
// of them behind the pools' by-id leaves, as in fleet's scale benchmark)
// whose zpool status alternates between two real outputs (e2e steps a and
// b1), so each is judged in full and every leaf is joined to the disks.
func BenchmarkObserveStatusDisks(b *testing.B) {
	r := smartReport(b, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	e := newTestEngine()
	for d := range 12 {
		r.Serial, r.Device = fmt.Sprintf("SIM0001D%02d", d), fmt.Sprintf("/dev/sd%c", 'a'+d)
		observe(b, e, smartEnv(b, r, t0), t0)
	}
	mix := []bus.Envelope{statusEnv(b, cap232+"a.zpool-status-p-P.txt", t0), statusEnv(b, cap232+"b1-offline.zpool-status-p-P.txt", t0)}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := e.Observe(mix[i%len(mix)], t0.Add(time.Duration(i)*time.Millisecond)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "msgs/cpu-s")
}

// BenchmarkTickDatasets: one re-evaluation (every 15 s per host) of a host
// with the real step k facts: k4's 17 datasets (three locked, a resume
// token), k1's snapshot summary, a pool list and status; Tick runs every
// scope.
func BenchmarkTickDatasets(b *testing.B) {
	e := newTestEngine(func(c *configRules) {
		replicationConfig.edit(c, func(r *replicationSettings) {
			r.Targets = []datasetAge{{Dataset: "backup/*", MaxAge: config.Duration(26 * time.Hour)}}
		})
	})
	now := k1Time(b)
	observe(b, e, statusEnv(b, cap232+"b1-offline.zpool-status.txt", now), now)
	observe(b, e, datasetsEnv(b, now, capturedDatasets(b, "k4-locked.zfs-list-datasets.txt")...), now)
	observe(b, e, snapshotsEnv(b, now, capturedSnapshots(b, "k1-healthy.zfs-list-snapshots.txt")), now)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(reevalEvery)
		e.Tick(now)
	}
}
