package rules

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
)

// The saved state of testdata/state/host-v1-41d2458.json is what the
// engine of commit 41d2458 wrote for one host after stateScenario: every
// kind of rule memory it had, and firing alerts already sent. An upgrade
// must read it without forgetting an alert or paging one again.
const legacyStateFixture = "testdata/state/host-v1-41d2458.json"

// scenarioEnd is when stateScenario's last step was observed.
var scenarioEnd = t0.Add(30 * time.Minute)

// scrubbedSlowPools is the real `zpool status -j` of capture step d1 (vault
// scrubbed, repairing 4.17M; 209 checksum errors on virtio-ZWV0002) with
// that leaf's slow-I/O counter set to n: a derived input, the counter
// being the only edit.
func scrubbedSlowPools(t *testing.T, n uint64) []*zfs.Pool {
	t.Helper()
	pools := statusPools(t, cap232+"d1-scrubbed.zpool-status-j.json")
	for _, l := range poolNamed(t, pools, "vault").Vdevs[0].Leaves() {
		if l.Path == slowLeaf0 {
			l.SlowIOs = &n
			return pools
		}
	}
	t.Fatal("no " + slowLeaf0 + " in vault")
	return nil
}

// heartbeatEnv is zwatch's heartbeat with the intervals of the polled
// collectors of stateScenario.
func heartbeatEnv(t *testing.T, at time.Time) bus.Envelope {
	return envOf(t, facts.Heartbeat.Name(), "zwatch", at, facts.HeartbeatData{Version: "41d2458", Started: t0,
		Collectors: map[string]facts.CollectorHealth{"zpool_status": {Interval: time.Minute}, "pool_kstat": {Interval: 10 * time.Second}}})
}

// stateScenario drives e through half an hour of one host (testHost) that
// fills every kind of memory the rules keep: vdev error counters, a
// scrub's end, capacity samples, slow-I/O counters and a deadman hang with
// the kernel clock learned from it, the kernel's pool states, one disk's
// smartctl timeouts and one collector's answers after a timeout, the pools
// seen and one forgotten, the disks the inventory listed, the ZFS versions,
// the kernel log's link resets and an ARC throttle. Alerts fire and are
// sent on the way. It ends at scenarioEnd.
func stateScenario(t *testing.T, e *Engine) {
	t.Helper()
	at := t0
	step := func(d time.Duration, envs ...bus.Envelope) {
		at = at.Add(d)
		for _, env := range envs {
			observe(t, e, env, at)
		}
		e.Tick(at)
	}
	version := parseTestdata(t, "zfs-version/openzfs-16716-nixos.txt", zfs.ParseVersionText)
	throttled := 0.9
	step(0,
		heartbeatEnv(t, at),
		kstatEnv(t, "online", at),
		poolsEnv(t, scrubbedSlowPools(t, 40), at),
		capEnv(t, capturedList(t, "d1-scrubbed.zpool-list-Hp.txt"), nil, at),
		inventoryEnv(t, at, vaultDisk, spareDisk),
		envOf(t, facts.ZFSVersion.Name(), "zfs_version", at, facts.ZFSVersionData{Userland: version.Userland, Kernel: version.Kernel, Source: "zfs version"}),
		timeoutEnv(t, "smart", "timeout", "/dev/sdb", at),
		timeoutEnv(t, "zpool_list", "timeout", "", at),
	)
	step(time.Minute,
		poolsEnv(t, scrubbedSlowPools(t, 43), at),
		envOf(t, facts.ZpoolCapacity.Name(), "zpool_list", at, facts.CapacityData{Pools: capturedList(t, "d1-scrubbed.zpool-list-Hp.txt")}),
		timeoutEnv(t, "smart", "timeout", "/dev/sdb", at),
		kernelEnv(t, at, kernelEntry(hitachi(), "usb 2-1", at.Add(-time.Minute), at, map[string]int{"link_reset": 14})),
	)
	step(10*time.Minute,
		poolsEnv(t, scrubbedSlowPools(t, 51), at),
		timeoutEnv(t, "smart", "timeout", "/dev/sdb", at),
		envOf(t, facts.ARC.Name(), "arc", at, zfs.ARC{SizeBytes: 1 << 30, HitRatio: &throttled, ThrottleDelta: 2, MemoryThrottleCount: 2}),
	)
	step(time.Minute,
		eventEnv(t, deadmanAt(at, 330*time.Second), at),
		forgetEnv(t, "oldpool", at),
		inventoryEnv(t, at, vaultDisk),
	)
	// Every pending alert reaches its `for` and every group is sent, while
	// the polled collectors repeat themselves.
	for at.Before(scenarioEnd) {
		next := at.Add(15 * time.Second)
		step(15*time.Second, heartbeatEnv(t, next), kstatEnv(t, "online", next), poolsEnv(t, scrubbedSlowPools(t, 51), next))
	}
	if !at.Equal(scenarioEnd) {
		t.Fatalf("the scenario ended at %s, not %s", at, scenarioEnd)
	}
}
