package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

func vdevStateRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus},
		Eval:  poolEval(ruleVdevState),
		Config: []config.RuleSection{
			redundancyConfig,
		},
		Alerts: []AlertInfo{{
			Name:        nameVdevState,
			Thresholds:  redundancyConfig.thresholds("critical_margin"),
			Severity:    "critical if the top-level margin ≤ `redundancy.critical_margin`, else warning; DEGRADED, cache and spares: warning",
			Condition:   "leaf FAULTED, UNAVAIL, REMOVED, OFFLINE, DEGRADED — a device shown by GUID keeps its `was` name as label",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

// nameVdevState: a leaf device that is FAULTED, UNAVAIL, REMOVED, OFFLINE or
// DEGRADED, including one zpool can only name by GUID ("was /dev/sdc").
// Losing a device is critical when its top-level vdev has no more margin
// than rules.redundancy.critical_margin, a warning otherwise. Cache devices
// and hot spares never hold the only copy: warning.
func ruleVdevState(c *evalCtx, p *zfs.Pool) {
	for _, cv := range p.AllVdevs() {
		left, _, hasMargin := margin(cv.Vdev)
		for _, l := range cv.Vdev.Leaves() {
			if !badState(cv.Class, l) {
				continue
			}
			sev := alert.Warning
			if hasMargin && l.State != zfs.StateDegraded && left <= redundancyConfig.of(c.cfg).CriticalMargin &&
				cv.Class != "cache" && cv.Class != "spares" {
				sev = alert.Critical
			}
			serial := c.h.serialOf(l)
			repl := replacementFor(c, p, cv.Vdev, l, serial)
			if !hasMargin || cv.Class == "cache" || cv.Class == "spares" {
				repl.Margin = nil
			} else {
				m := left
				repl.Margin = &m
			}
			what := diskName(vdevID(l), serial)
			summary := fmt.Sprintf("%s in %s is %s", what, zfs.Place(p.Name, cv.Vdev.Name), l.State)
			if repl.Margin != nil && cv.Vdev != l {
				summary += ": " + cv.Vdev.Name + " " + marginText(*repl.Margin)
			}
			desc := fmt.Sprintf("%s device %s (%s) of pool %s is %s.", cv.Class, vdevID(l), l.Type, p.Name, l.State)
			if len(l.Notes) > 0 {
				desc += " zpool says: " + strings.Join(l.Notes, "; ") + "."
			}
			if a := strings.TrimSpace(p.Action); a != "" {
				desc += "\naction: " + oneLine(a)
			}
			ev := map[string]string{"state": l.State, "class": cv.Class, "top_vdev": cv.Vdev.Name}
			if l.GUID != "" {
				ev["guid"] = l.GUID
			}
			if l.Was != "" {
				ev["was"] = l.Was
			}
			c.emit(cond{
				name: nameVdevState, severity: sev, pool: p.Name, serial: serial,
				labels:  map[string]string{"pool": p.Name, "vdev": vdevID(l)},
				summary: summary, desc: desc, evidence: ev, repl: repl,
			})
		}
	}
}

func badState(class string, l *zfs.Vdev) bool {
	if l.Type == zfs.VdevDSpare {
		return l.State == zfs.StateFaulted || l.State == zfs.StateUnavail
	}
	switch l.State {
	case zfs.StateFaulted, zfs.StateUnavail, zfs.StateRemoved:
		return true
	case zfs.StateOffline, zfs.StateDegraded:
		return class != "spares"
	}
	return false
}

// replacementFor builds what the replacement guide needs for leaf l.
func replacementFor(c *evalCtx, p *zfs.Pool, top, l *zfs.Vdev, serial string) *alert.Replacement {
	r := &alert.Replacement{Pool: p.Name, TopVdev: top.Name, VdevPath: l.Path, VdevGUID: l.GUID, VdevState: l.State, Was: l.Was, PoolState: p.State}
	if r.VdevPath == "" {
		r.VdevPath = l.Name
	}
	if serial != "" {
		r.Disk = c.h.identity(serial)
	}
	return r
}

// diskName is how a person recognises the disk: its serial when known.
func diskName(vdev, serial string) string {
	if serial != "" && !strings.Contains(vdev, serial) {
		return serial + " (" + vdev + ")"
	}
	return vdev
}
