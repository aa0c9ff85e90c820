package rules

import (
	"testing"

	"github.com/zwatch/zwatch/config"
)

// Every case parses a real `zpool status` output into a zpool.status
// message and checks what the status rules make of it.
func TestStatusRules(t *testing.T) {
	names := []string{namePoolState, namePoolStatusMessage, nameVdevState, nameRedundancy, namePoolDataErrors}
	cases := []struct {
		file string
		want []string
	}{
		{"zpool-status/freebsd-raidz1-gpt-label-online.txt", nil},
		{"zpool-status/linux-truenas-raidz2-online-scrubbed-tabs.txt", nil},
		{"zpool-status/freebsd-raidz1-degraded-removed.txt", []string{
			"PoolState warning pool=upool state=DEGRADED",
			"RedundancyMargin critical pool=upool vdev=raidz1-0",
			"VdevState critical pool=upool vdev=gpt/usb1",
		}},
		// A GUID-named device that is gone keeps the name it had ("was").
		{"zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt", []string{
			"PoolState warning pool=upool state=DEGRADED",
			"RedundancyMargin critical pool=upool vdev=raidz1-0",
			"VdevState critical pool=upool vdev=gpt/usb2",
		}},
		// Replacing: the new disk resilvers, so no margin is back yet.
		{"zpool-status/freebsd-raidz1-replacing-guid-was-dev-resilvering.txt", []string{
			"PoolState warning pool=upool state=DEGRADED",
			"RedundancyMargin critical pool=upool vdev=raidz1-0",
			"VdevState critical pool=upool vdev=gpt/usb2",
		}},
		// raidz2 with one FAULTED disk: can lose 1 more → warning.
		{"zpool-status/freebsd-raidz2-degraded-faulted-too-many-errors.txt", []string{
			"PoolState warning pool=upool state=DEGRADED",
			"RedundancyMargin warning pool=upool vdev=raidz2-0",
			"VdevState warning pool=upool vdev=gpt/usb0",
		}},
		// dRAID: the distributed spare is still being rebuilt.
		{"zpool-status/openzfs-2.1-draid1-sequential-resilver-spare-inuse.txt", []string{
			"PoolState warning pool=tank state=DEGRADED",
			"RedundancyMargin critical pool=tank vdev=draid1:4d:11c:1s-0",
			"VdevState critical pool=tank vdev=sdg",
		}},
		// ONLINE with a msgid: errors were corrected.
		{"zpool-status/zol-0.7-mirror-ramdisk-cksum-47-9P.txt", []string{
			"PoolStatusMessage warning msgid=ZFS-8000-9P pool=rtest",
		}},
		// ONLINE, only behind on features: information.
		{"zpool-status/zol-raidz1-features-not-enabled-status.txt", []string{"PoolStatusMessage info msgid=status pool=n"}},
		{"zpool-status/freebsd-single-status-v-permanent-errors.txt", []string{
			"PoolDataErrors critical pool=ztest",
			"PoolStatusMessage warning msgid=ZFS-8000-8A pool=ztest",
		}},
		// The pool is UNAVAIL: its device alerts exist but are inhibited (see TestInhibition).
		{"zpool-status/zol-0.7rc-pool-unavail-insufficient-replicas-suspended-errlog.txt", []string{
			"PoolState critical pool=dozer state=UNAVAIL",
			"RedundancyMargin critical pool=dozer vdev=sdd",
			"VdevState critical pool=dozer vdev=sdd",
		}},
		{"zpool-status/solaris10-mirror-degraded-unavail-cannot-open.txt", []string{
			"PoolState warning pool=tank state=DEGRADED",
			"RedundancyMargin critical pool=tank vdev=mirror-0",
			"VdevState critical pool=tank vdev=c1t1d0",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			e := newTestEngine()
			observe(t, e, statusEnv(t, tc.file, t0), t0)
			sameList(t, active(e, names...), tc.want)
		})
	}
}

func TestRedundancyCriticalMargin(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) {
		redundancyConfig.edit(c, func(r *redundancySettings) { r.CriticalMargin = 1 })
	})
	observe(t, e, statusEnv(t, "zpool-status/freebsd-raidz2-degraded-faulted-too-many-errors.txt", t0), t0)
	a := find(e, nameRedundancy)
	if a == nil || a.Severity != "critical" {
		t.Fatalf("raidz2 down one disk with critical_margin 1: %+v", a)
	}
}
