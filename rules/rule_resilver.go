package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

func resilverRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus},
		Eval:  poolEval(ruleResilver),
		Alerts: []AlertInfo{{
			Name:      nameResilver,
			Severity:  "info",
			Condition: "resilver running; its resolved notice says it finished; a routine one (no data or device errors) is only this notice, no `PoolStatusMessage` warning",
		}},
	}
}

// nameResilver: a resilver in progress is information — the person who
// replaced a disk wants to know it started, and its resolved notice says it
// finished and how (see noteResilverEnds). Its danger, another disk of the
// same vdev failing meanwhile, is ResilverAtRisk's job.
func ruleResilver(c *evalCtx, p *zfs.Pool) {
	s := &p.Scan
	if s.Function != zfs.ScanResilver || s.State != zfs.ScanStateScanning {
		return
	}
	summary := fmt.Sprintf("pool %s is resilvering", p.Name)
	if s.PercentDone > 0 {
		summary += fmt.Sprintf(": %.1f%% done", s.PercentDone)
	}
	if s.ETASeconds > 0 {
		summary += fmt.Sprintf(", about %s to go", fmtDur(secs(s.ETASeconds)))
	}
	var targets []string
	for _, cv := range p.AllVdevs() {
		for _, l := range cv.Vdev.Leaves() {
			if resilvering(l) {
				targets = append(targets, vdevID(l))
			}
		}
	}
	ev := map[string]string{}
	if s.Text != "" {
		ev["scan"] = oneLine(s.Text)
	}
	desc := fmt.Sprintf("ZFS is rebuilding redundancy in pool %s.", p.Name)
	if len(targets) > 0 {
		desc += fmt.Sprintf(" Writing to %v.", targets)
	}
	if routineResilver(p) {
		desc += " No data or device errors: nothing to do but let it finish."
	}
	c.emit(cond{name: nameResilver, severity: alert.Info, pool: p.Name,
		labels:  map[string]string{"pool": p.Name},
		summary: summary, desc: desc, evidence: ev})
}

// routineResilver: the pool resilvers what a device missed (it came back
// after a replug or `zpool online`) or onto a new one (`zpool replace`),
// and nothing is wrong with the data: no permanent errors, no device with
// READ/WRITE/CKSUM errors, no errors in the scan. zpool's status text then
// only says "One or more devices is currently being resilvered"; the
// Resilver notice (info) tells that, so PoolStatusMessage does not page
// it as a warning. Errors make it no routine: the status message stays.
func routineResilver(p *zfs.Pool) bool {
	s := &p.Scan
	if s.Function != zfs.ScanResilver || s.State != zfs.ScanStateScanning || s.Errors > 0 {
		return false
	}
	if p.MsgID != "" || !strings.Contains(strings.ToLower(p.Status), "currently being resilvered") {
		return false
	}
	if p.DataErrors.Count > 0 || len(p.DataErrors.Files) > 0 {
		return false
	}
	for _, cv := range p.AllVdevs() {
		for _, l := range cv.Vdev.Leaves() {
			if l.ReadErrors+l.WriteErrors+l.ChecksumErrors > 0 {
				return false
			}
		}
	}
	return true
}

// noteResilverEnds rewrites a finished resilver's resolved notice to say how
// it ended, from the scan line of the status that ended it.
func (e *Engine) noteResilverEnds(h *hostState) {
	for _, t := range h.Alerts {
		if t.A.Name != nameResilver || t.A.State != alert.Resolved || t.A.Evidence["finished"] != "" {
			continue
		}
		pool := t.A.Labels["pool"]
		t.A.Summary = fmt.Sprintf("pool %s: resilver finished", pool)
		ev := copyMap(t.A.Evidence)
		ev["finished"] = "true"
		for _, p := range h.pools {
			if p != nil && p.Name == pool {
				if p.Scan.Function == zfs.ScanResilver && p.Scan.State == zfs.ScanStateFinished {
					t.A.Summary = fmt.Sprintf("pool %s: resilver finished with %d error(s)", pool, p.Scan.Errors)
				}
				if p.Scan.Text != "" {
					ev["scan"] = oneLine(p.Scan.Text)
				}
				t.A.Description = fmt.Sprintf("Pool %s is %s.", pool, p.State)
			}
		}
		t.A.Evidence = ev
	}
}
