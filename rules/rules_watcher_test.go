package rules

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// Heartbeats, collector errors and ARC readings are zwatch's own messages;
// no captured ones exist, so they are built here as the daemon builds them.
func heartbeat(t *testing.T, at time.Time, cs map[string]facts.CollectorHealth) bus.Envelope {
	return envOf(t, facts.Heartbeat.Name(), "zwatch", at, facts.HeartbeatData{Version: "test", Started: t0, Collectors: cs})
}

func TestCollectorStaleAndHostSilent(t *testing.T) {
	e := newTestEngine()
	hb := map[string]facts.CollectorHealth{
		"zpool_status": {Interval: time.Minute},
		"smart":        {Interval: 30 * time.Minute},
		"zpool_events": {}, // no interval: never stale
	}
	observe(t, e, heartbeat(t, t0, hb), t0)
	observe(t, e, statusEnv(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt", t0), t0)
	names := []string{nameCollectorStale, nameHostSilent}
	// A stale collector pages only after a minute more (defaultFor): zpool
	// list is late whenever zpool create or import holds the pool lock.
	steps := []struct {
		at         time.Duration
		beat       bool
		want       []string
		staleState alert.State
	}{
		{2 * time.Minute, true, nil, ""},
		{3*time.Minute + time.Second, true, []string{"CollectorStale warning collector=zpool_status"}, alert.Pending},
		{4 * time.Minute, false, []string{"CollectorStale warning collector=zpool_status"}, alert.Pending},
		{8 * time.Minute, false, []string{"CollectorStale warning collector=zpool_status", "HostSilent critical"}, alert.Firing},
	}
	for _, s := range steps {
		now := t0.Add(s.at)
		if s.beat {
			observe(t, e, heartbeat(t, now, hb), now)
		}
		e.Tick(now)
		sameList(t, active(e, names...), s.want)
		if a := find(e, nameCollectorStale); a != nil && a.State != s.staleState {
			t.Errorf("at %s CollectorStale is %s, want %s", s.at, a.State, s.staleState)
		}
	}
	// Fresh status data ends the stale alert.
	now := t0.Add(9 * time.Minute)
	observe(t, e, statusEnv(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt", now), now)
	observe(t, e, heartbeat(t, now, hb), now)
	sameList(t, active(e, names...), nil)
}

func TestCommandHangsAndBlindSpot(t *testing.T) {
	e := newTestEngine()
	errEnv := func(kind, coll string, at time.Time) bus.Envelope {
		return envOf(t, facts.CollectorError.Name(), coll, at, facts.CollectorErrorData{Collector: coll, Kind: kind, Command: "zpool status -p", Message: "no answer within 30s; killed"})
	}
	for i := 1; i <= 3; i++ {
		now := t0.Add(time.Duration(i) * time.Minute)
		observe(t, e, errEnv("timeout", "zpool_status", now), now)
		if got := find(e, nameCommandHangs) != nil; got != (i >= 3) {
			t.Errorf("after %d timeouts: hangs alert %v", i, got)
		}
	}
	if a := find(e, nameCommandHangs); a.Summary != "nas1: zpool hangs — pool may be SUSPENDED" || a.Severity != "critical" {
		t.Errorf("%+v", a)
	}
	observe(t, e, errEnv("missing", "smart", t0), t0)
	observe(t, e, heartbeat(t, t0, map[string]facts.CollectorHealth{"arc": {Disabled: "zpool not found"}}), t0)
	sameList(t, active(e, nameBlindSpot), []string{"MonitoringBlindSpot warning collector=arc", "MonitoringBlindSpot warning collector=smart"})
	// Every evidence line says something: a collector off for want of its
	// tool is "disabled", not an empty kind.
	for _, a := range e.Alerts(testHost) {
		for k, v := range a.Evidence {
			if a.Name == nameBlindSpot && v == "" {
				t.Errorf("%s %s: empty evidence %q", a.Name, a.Labels["collector"], k)
			}
		}
	}
	// zpool answers again: one answer between two hangs is a flap, two in
	// a row end the hang.
	now := t0.Add(5 * time.Minute)
	observe(t, e, statusEnv(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt", now), now)
	sameList(t, active(e, nameCommandHangs), []string{"CommandHangs critical collector=zpool_status"})
	now = now.Add(time.Minute)
	observe(t, e, statusEnv(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt", now), now)
	e.Tick(now) // the same status again is judged at the tick
	sameList(t, active(e, nameCommandHangs), nil)
}

func TestARCRules(t *testing.T) {
	ratio := 0.5
	e := newTestEngine(func(c *configRules) {
		arcConfig.edit(c, func(a *arcSettings) { a.MinHitRatio = 0.8 })
		c.For = forZero("ARCHitRatio")
	})
	arc := func(at time.Time, a zfs.ARC) { observe(t, e, envOf(t, facts.ARC.Name(), "arc", at, a), at) }
	arc(t0, zfs.ARC{SizeBytes: 1 << 30, HitRatio: &ratio, ThrottleDelta: 2, MemoryThrottleCount: 2})
	sameList(t, active(e), []string{"ARCHitRatio warning", "ARCThrottle warning"})
	good := 0.95
	arc(t0.Add(time.Minute), zfs.ARC{HitRatio: &good, MemoryThrottleCount: 2})
	sameList(t, active(e), []string{"ARCThrottle warning"}) // held
	e.Tick(t0.Add(2 * time.Hour))
	sameList(t, active(e), nil)
}
