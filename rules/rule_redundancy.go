package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// redundancySettings are rules.redundancy: when a lost device margin
// becomes critical. VdevState reads them too.
type redundancySettings struct {
	// CriticalMargin: a top-level vdev that survives this many more device
	// failures or fewer is critical; with more, but less than designed, warning.
	CriticalMargin int `yaml:"critical_margin" doc:"a top-level vdev that can lose this many more disks or fewer is critical"`
}

var redundancyConfig = defineConfig("redundancy", redundancySettings{})

func (r redundancySettings) validate(p string, errs *config.Errors) {
	if r.CriticalMargin < 0 || r.CriticalMargin > 2 {
		errs.Add(p+".critical_margin", r.CriticalMargin, "must be 0, 1 or 2")
	}
}

func redundancyRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus},
		Eval:  poolEval(ruleRedundancy),
		Config: []config.RuleSection{
			redundancyConfig,
		},
		Alerts: []AlertInfo{{
			Name:        nameRedundancy,
			Thresholds:  redundancyConfig.thresholds("critical_margin"),
			Severity:    "critical ≤ `critical_margin` ({redundancy.critical_margin}), else warning",
			Condition:   `top-level vdev lost some redundancy: "can lose 1 more disk", "has no redundancy left", "has failed"`,
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

// margin returns how many more device failures top-level vdev v survives
// (negative: it has failed) and how many it was built to survive.
//
//   - n-way mirror: n−1 minus failed children;
//   - raidzP: P minus failed children;
//   - dRAID: parity minus failed children. A failed child replaced by a
//     distributed spare appears as spare-N holding the old disk and the
//     dspare; once the sequential rebuild onto the dspare has finished, the
//     parity it lost is back, so spare-N counts as one healthy child. While
//     the rebuild runs it does not;
//   - a single device: 0, or −1 when it is gone.
//
// A replacing-N or spare-N interior vdev stands for one child: healthy when
// any of its children is healthy and not resilvering. While the new disk
// resilvers, the data is only complete on the missing one, so no margin is
// regained until the resilver ends. A DEGRADED leaf (ZFS saw too many errors
// but still uses it) counts as healthy here; VdevState reports it.
func margin(v *zfs.Vdev) (left, designed int, ok bool) {
	switch v.Type {
	case zfs.VdevMirror:
		h := healthyChildren(v, false)
		return h - 1, len(v.Children) - 1, len(v.Children) > 0
	case zfs.VdevRaidz, zfs.VdevDraid:
		p := v.Parity
		if p == 0 {
			p = parityFromName(v.Name)
		}
		failed := len(v.Children) - healthyChildren(v, v.Type == zfs.VdevDraid)
		return p - failed, p, p > 0
	case zfs.VdevDisk, zfs.VdevFile, zfs.VdevReplacing, zfs.VdevSpare:
		if healthy(v, false) {
			return 0, 0, true
		}
		return -1, 0, true
	}
	return 0, 0, false
}

func healthyChildren(v *zfs.Vdev, draid bool) int {
	n := 0
	for _, c := range v.Children {
		if healthy(c, draid) {
			n++
		}
	}
	return n
}

// healthy: a leaf that serves all its data; an interior replacing/spare
// vdev with at least one such child. In a dRAID rebuild zpool marks every
// child "(resilvering)" because all of them take part; there only the
// distributed spare being written lacks data.
func healthy(v *zfs.Vdev, draid bool) bool {
	if v.IsLeaf() {
		ok := v.State == zfs.StateOnline || v.State == zfs.StateDegraded
		if draid && v.Type != zfs.VdevDSpare && !isDSpareName(v.Name) {
			return ok
		}
		return ok && !resilvering(v)
	}
	for _, c := range v.Children {
		if healthy(c, draid) {
			return true
		}
	}
	return false
}

// isDSpareName: draid1-0-0, the distributed spare, when the parser typed it a disk.
func isDSpareName(n string) bool {
	return strings.HasPrefix(n, "draid") && strings.Count(n, "-") == 2 && !strings.Contains(n, ":")
}

func resilvering(v *zfs.Vdev) bool {
	for _, n := range v.Notes {
		if strings.Contains(n, "resilvering") {
			return true
		}
	}
	return false
}

// parityFromName reads raidz2-0 or draid2:4d:8c:1s-0 when the parser left Parity at 0.
func parityFromName(name string) int {
	for _, pre := range []string{"raidz", "draid"} {
		if strings.HasPrefix(name, pre) && len(name) > len(pre) {
			if d := name[len(pre)]; d >= '1' && d <= '3' {
				return int(d - '0')
			}
			return 1 // plain "raidz-0" is raidz1
		}
	}
	return 0
}

// marginTops are the classes whose loss loses data (logs only on a crash,
// but a pool with a dead unmirrored log refuses to import cleanly).
func marginTops(p *zfs.Pool) []zfs.ClassVdev {
	var out []zfs.ClassVdev
	for _, cv := range p.AllVdevs() {
		switch cv.Class {
		case "data", "special", "dedup", "logs":
			out = append(out, cv)
		}
	}
	return out
}

// nameRedundancy: a top-level vdev that has lost some of its redundancy.
// "raidz2-0 can lose 1 more disk" is a warning; "mirror-0 has no redundancy
// left" is critical (rules.redundancy.critical_margin moves that line).
func ruleRedundancy(c *evalCtx, p *zfs.Pool) {
	for _, cv := range marginTops(p) {
		v := cv.Vdev
		left, designed, ok := margin(v)
		if !ok || left >= designed {
			continue
		}
		sev := alert.Warning
		if left <= redundancyConfig.of(c.cfg).CriticalMargin {
			sev = alert.Critical
		}
		m := left
		c.emit(cond{
			name: nameRedundancy, severity: sev, pool: p.Name,
			labels:  map[string]string{"pool": p.Name, "vdev": v.Name},
			summary: redundancySummary(p.Name, v, left),
			desc: fmt.Sprintf("%s vdev %s of pool %s was built to survive %d device failure(s); %d of its %d children are not serving data (%s).",
				cv.Class, v.Name, p.Name, designed, len(v.Children)-healthyChildren(v, v.Type == zfs.VdevDraid), len(v.Children), strings.Join(badLeavesOf(v), ", ")),
			evidence: map[string]string{"margin": fmt.Sprint(left), "designed_margin": fmt.Sprint(designed), "class": cv.Class},
			repl:     &alert.Replacement{Pool: p.Name, TopVdev: v.Name, Margin: &m},
		})
	}
}

func marginText(left int) string {
	switch {
	case left < 0:
		return "has failed"
	case left == 0:
		return "has no redundancy left"
	case left == 1:
		return "can lose 1 more disk"
	}
	return fmt.Sprintf("can lose %d more disks", left)
}

func badLeavesOf(v *zfs.Vdev) []string {
	var out []string
	for _, l := range v.Leaves() {
		if l.Type == zfs.VdevDSpare {
			continue
		}
		switch {
		case resilvering(l):
			out = append(out, vdevID(l)+" resilvering")
		case l.State != zfs.StateOnline:
			out = append(out, vdevID(l)+" "+l.State)
		}
	}
	return out
}

// redundancySummary names the vdev once: a single-disk top-level vdev is
// the disk ("sdb in tank has failed", not "tank//dev/sdb has failed").
func redundancySummary(pool string, v *zfs.Vdev, left int) string {
	if v.IsLeaf() {
		return fmt.Sprintf("%s in %s %s", vdevID(v), pool, marginText(left))
	}
	return fmt.Sprintf("%s/%s %s", pool, v.Name, marginText(left))
}
