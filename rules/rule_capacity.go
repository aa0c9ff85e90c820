package rules

import (
	"fmt"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/units"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

func poolCapacityRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolCapacity},
		Eval:  poolCapacityEval(rulePoolCapacity),
		Alerts: []AlertInfo{{
			Name: namePoolCapacity,
			For:  5 * time.Minute,
			Thresholds: []Threshold{
				{"capacity.warning", "80"}, {"capacity.critical", "90"}, {"capacity.hysteresis", "3"},
			},
			Severity:  "warning ≥ `capacity.warning` ({capacity.warning}), critical ≥ `capacity.critical` ({capacity.critical})",
			Condition: "a level holds until `capacity.hysteresis` ({capacity.hysteresis}) points below it; `for` {for}",
		}},
	}
}

// namePoolCapacity: pools slow down and fragment past 80 % and can wedge
// near 100 % (even deletes need space). Levels come from
// rules.capacity.warning/critical; a level, once reached, holds until the
// pool drops rules.capacity.hysteresis points below it, so a pool hovering
// at 80 % does not page every few minutes.
func rulePoolCapacity(c *evalCtx, p *zfs.PoolList) {
	cfg := c.cfg.Capacity
	labels := map[string]string{"pool": p.Name}
	prev := c.previous(namePoolCapacity, labels)
	pct := p.CapacityPct
	var sev alert.Severity
	switch {
	case pct >= cfg.Critical:
		sev = alert.Critical
	case prev != nil && prev.A.Severity == alert.Critical && pct >= cfg.Critical-cfg.Hysteresis:
		sev = alert.Critical
	case pct >= cfg.Warning:
		sev = alert.Warning
	case prev != nil && pct >= cfg.Warning-cfg.Hysteresis:
		sev = alert.Warning
	default:
		return
	}
	ev := map[string]string{"capacity_percent": fmt.Sprintf("%.0f", pct)}
	if p.SizeBytes > 0 {
		ev["size_bytes"], ev["free_bytes"] = itoa(p.SizeBytes), itoa(p.FreeBytes)
	}
	c.emit(cond{name: namePoolCapacity, severity: sev, pool: p.Name, labels: labels,
		summary: fmt.Sprintf("pool %s is %.0f%% full", p.Name, pct),
		desc: fmt.Sprintf("Pool %s is %.0f%% full (%s free). ZFS slows down past 80%% and can wedge near 100%%; free space or add a vdev. Snapshots hold space: check `zfs list -t snapshot -o name,used -s used`.",
			p.Name, pct, units.IEC(p.FreeBytes)),
		evidence: ev})
}

// usableFullness is how full a pool is for its users. zpool list's CAP
// counts raw space — raidz parity, and the slop space ZFS keeps free (1/32
// of the pool, at least 128 MiB) — so a small pool that refuses writes can
// show 50 % (testdata/zpool-list/zfs-2.3.2-qemu-small-pool-full-at-slop.*);
// the root dataset's used/(used+avail) is what writes see. The larger of
// the two is taken.
func usableFullness(p *zfs.PoolList, datasets []zfs.Dataset) float64 {
	pct := p.CapacityPct
	for _, d := range datasets {
		if d.Name != p.Name || d.UsedBytes+d.AvailBytes == 0 {
			continue
		}
		if ds := 100 * float64(d.UsedBytes) / float64(d.UsedBytes+d.AvailBytes); ds > pct {
			pct = ds
		}
	}
	return pct
}
