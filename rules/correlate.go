package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// The cross-source rules read the alerts of the other scopes: status,
// SMART and kernel log facts are joined by disk serial (join.go). Neither reads the
// other's conditions, so their order in the catalogue changes nothing.

func diskIncidentRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus, facts.Smart, facts.KernelLog},
		Eval:  correlateEval(ruleDiskIncident),
		Alerts: []AlertInfo{{
			Name:      nameDiskIncident,
			Severity:  "worst of its parts",
			Condition: `alerts of two or more of ZFS (state, errors, slow I/O), SMART and the kernel log about the same disk (by serial), one incident: "sdb (WD-WX32D7088AF1) in vault/raidz2-0: 14 link resets in 10 min, 2 read errors and 8 pending sectors"`,
			// The incident carries its parts: every other alert about that
			// disk. ResilverAtRisk is not a part: it is about the whole
			// vdev, which may be lost with the disk.
			Inhibits: []InhibitRule{{
				Target:   Matcher{NotNames: []string{nameDiskIncident, nameResilverAtRisk}},
				SameDisk: true,
			}},
			InhibitedBy: []InhibitRule{poolDown()},
		}},
		Memory: []memoryDef{kernelMemory},
	}
}

func resilverAtRiskRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus, facts.Smart, facts.KernelLog},
		Eval:  correlateEval(ruleResilverAtRisk),
		Alerts: []AlertInfo{{
			Name:        nameResilverAtRisk,
			Severity:    "critical",
			Condition:   "a disk of a resilvering top-level vdev has a warning or critical SMART or kernel-log alert",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

// zfsDiskRules are the ZFS alerts about one device.
func zfsDiskRule(name string) bool {
	return name == nameVdevState || name == nameVdevErrors || name == nameVdevErrorRate || name == nameSlowIO
}

// nameDiskIncident: two or more of ZFS, SMART and the kernel log complain
// about the same physical disk (joined by serial, see join.go). One incident
// shows every side — "WD-WX32D7088AF1 in vault/raidz2-0: 3 checksum errors
// and 8 pending sectors" — and its parts are inhibited while it fires, so
// the person gets one page about one disk. A kernel alert about a port or a
// name that maps to no disk has no serial and joins nothing.
func ruleDiskIncident(c *evalCtx) {
	type side struct{ kernel, zfs, smart []*tracked }
	bySerial := map[string]*side{}
	for _, t := range c.h.Alerts {
		if t.Serial == "" || t.A.State == alert.Resolved {
			continue
		}
		s := bySerial[t.Serial]
		if s == nil {
			s = &side{}
			bySerial[t.Serial] = s
		}
		switch {
		case zfsDiskRule(t.A.Name):
			s.zfs = append(s.zfs, t)
		case strings.HasPrefix(t.Scope, scopeSmart):
			s.smart = append(s.smart, t)
		case t.Scope == scopeKernel:
			s.kernel = append(s.kernel, t)
		}
	}
	serials := make([]string, 0, len(bySerial))
	for s := range bySerial {
		serials = append(serials, s)
	}
	sort.Strings(serials)
	for _, serial := range serials {
		s := bySerial[serial]
		var sources []string
		for _, src := range []struct {
			name  string
			parts []*tracked
		}{{"the kernel log", s.kernel}, {"ZFS", s.zfs}, {"SMART", s.smart}} {
			if len(src.parts) > 0 {
				sources = append(sources, src.name)
			}
		}
		if len(sources) < 2 {
			continue
		}
		// The kernel's view first (it usually speaks first), then ZFS's,
		// then SMART's: "14 link resets in 10 min, 3 checksum errors and 8 pending sectors".
		for _, ts := range [][]*tracked{s.kernel, s.zfs, s.smart} {
			sort.Slice(ts, func(i, j int) bool { return lessAlert(&ts[i].A, &ts[j].A) })
		}
		parts := append(append(append([]*tracked{}, s.kernel...), s.zfs...), s.smart...)
		sev := alert.Info
		var news uint64
		var shorts, lines []string
		var repl *alert.Replacement
		for _, p := range parts {
			if p.A.Severity.Rank() > sev.Rank() {
				sev = p.A.Severity
			}
			news += partNews(p)
			shorts = append(shorts, shortOf(&p.A))
			lines = append(lines, "- "+p.A.Summary)
			if repl == nil && zfsDiskRule(p.A.Name) && p.A.Replacement != nil {
				r := *p.A.Replacement
				repl = &r
			}
		}
		if repl != nil && repl.Disk == nil {
			repl.Disk = c.h.identity(serial)
		}
		where := serial
		if kd := kernelMemory.peek(c.h).disks()[serial]; kd != nil && len(s.kernel) > 0 {
			where = kernelWho(kd)
		}
		all := "both"
		if len(sources) > 2 {
			all = "all"
		}
		pool := ""
		if l := c.h.leafOfSerial(serial); l != nil {
			where += " in " + zfs.Place(l.Pool, l.Top)
			pool = l.Pool
		}
		c.emit(cond{name: nameDiskIncident, severity: sev, serial: serial, pool: pool, news: news,
			labels:   map[string]string{"disk": serial, "pool": pool},
			summary:  where + ": " + joinAnd(dedupe(shorts)),
			desc:     fmt.Sprintf("%s %s report trouble with disk %s:\n%s", joinAnd(sources), all, serial, strings.Join(lines, "\n")),
			evidence: map[string]string{"parts": fmt.Sprint(len(parts))}, repl: repl})
	}
}

// partNews is what a part adds to its incident's news: how far its own
// news grew since it joined. A part that joins (a ZFS error counter whose
// `for` ended after the incident paged, a count restored after a restart)
// is in the incident's text from the next notice on but pages nothing by
// itself; a part whose news grows while in the incident (a newer failed
// self-test, a count past the next power of ten) pages it again.
func partNews(p *tracked) uint64 {
	if p.IncidentBase == nil {
		base := p.News
		p.IncidentBase = &base
	}
	if p.News <= *p.IncidentBase {
		return 0
	}
	return p.News - *p.IncidentBase
}

// shortOf is the part of an alert's summary after "<where>: ", or, for a
// device state, "UNAVAIL".
func shortOf(a *alert.Alert) string {
	if a.Name == nameVdevState {
		if st := a.Evidence["state"]; st != "" {
			return st
		}
	}
	if i := strings.Index(a.Summary, ": "); i >= 0 {
		return a.Summary[i+2:]
	}
	return a.Summary
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// nameResilverAtRisk: while a vdev resilvers it has, by definition, lost
// redundancy; a SMART complaint from any disk of that vdev means the
// rebuild itself may fail and take the vdev with it. Critical.
func ruleResilverAtRisk(c *evalCtx) {
	smartBySerial := map[string][]*tracked{}
	for _, t := range c.h.Alerts {
		diskScope := strings.HasPrefix(t.Scope, scopeSmart) || t.Scope == scopeKernel
		if t.Serial != "" && t.A.State != alert.Resolved && diskScope && t.A.Severity.Rank() >= alert.Warning.Rank() {
			smartBySerial[t.Serial] = append(smartBySerial[t.Serial], t)
		}
	}
	if len(smartBySerial) == 0 {
		return
	}
	for _, l := range c.h.Leaves {
		ts := smartBySerial[l.Serial]
		if !l.Resilvering || l.Serial == "" || len(ts) == 0 {
			continue
		}
		sort.Slice(ts, func(i, j int) bool { return lessAlert(&ts[i].A, &ts[j].A) })
		var shorts []string
		smartSide, kernelSide := false, false
		for _, t := range ts {
			shorts = append(shorts, shortOf(&t.A))
			kernelSide = kernelSide || t.Scope == scopeKernel
			smartSide = smartSide || t.Scope != scopeKernel
		}
		trouble, problems := "SMART trouble", "SMART problems"
		switch {
		case kernelSide && smartSide:
			trouble, problems = "SMART and kernel-log trouble", "SMART problems and the kernel logs errors for it"
		case kernelSide:
			trouble, problems = "kernel-log trouble", "no SMART problem yet, but the kernel logs errors for it"
		}
		m := l.Margin
		c.emit(cond{name: nameResilverAtRisk, severity: alert.Critical, serial: l.Serial, pool: l.Pool,
			labels:  map[string]string{"pool": l.Pool, "vdev": l.Top, "disk": l.Serial},
			summary: fmt.Sprintf("%s/%s is resilvering and %s shows %s: %s", l.Pool, l.Top, l.Serial, trouble, joinAnd(dedupe(shorts))),
			desc: fmt.Sprintf("Top-level vdev %s of pool %s is resilvering, so it has lost redundancy, and disk %s (%s) of that vdev reports %s. If it fails before the resilver ends, data may be lost. Avoid load on the pool, check backups, and have another replacement ready.",
				l.Top, l.Pool, l.Serial, l.Name, problems),
			repl: &alert.Replacement{Pool: l.Pool, TopVdev: l.Top, VdevPath: l.Path, VdevGUID: l.GUID, VdevState: l.State, Disk: c.h.identity(l.Serial), Margin: &m}})
	}
}
