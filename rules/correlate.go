package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/zfs"
)

// The cross-source rules read the alerts of the other scopes: status and
// SMART facts are joined by disk serial (join.go). Neither reads the
// other's conditions, so their order in the catalogue changes nothing.

func diskIncidentRule() Rule {
	return Rule{
		Reads: []string{facts.KindZpoolStatus, facts.KindSmart},
		Eval:  correlateEval(ruleDiskIncident),
		Alerts: []AlertInfo{{
			Name:      nameDiskIncident,
			Severity:  "worst of its parts",
			Condition: `ZFS and SMART alerts about the same disk, one incident: "WD-WX32D7088AF1 in vault/raidz2-0: 3 checksum errors and 8 pending sectors"`,
			// The incident carries its parts: every other alert about that
			// disk. ResilverAtRisk is not a part: it is about the whole
			// vdev, which may be lost with the disk.
			Inhibits: []InhibitRule{{
				Target:   Matcher{NotNames: []string{nameDiskIncident, nameResilverAtRisk}},
				SameDisk: true,
			}},
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

func resilverAtRiskRule() Rule {
	return Rule{
		Reads: []string{facts.KindZpoolStatus, facts.KindSmart},
		Eval:  correlateEval(ruleResilverAtRisk),
		Alerts: []AlertInfo{{
			Name:        nameResilverAtRisk,
			Severity:    "critical",
			Condition:   "a disk of a resilvering top-level vdev has a warning or critical SMART alert",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

// zfsDiskRules are the ZFS alerts about one device.
func zfsDiskRule(name string) bool {
	return name == nameVdevState || name == nameVdevErrors || name == nameVdevErrorRate
}

// nameDiskIncident: ZFS and SMART both complain about the same physical
// disk (joined by serial, see join.go). One incident shows both sides —
// "WD-WX32D7088AF1 in vault/raidz2-0: 3 checksum errors and 8 pending
// sectors" — and its parts are inhibited while it fires, so the person gets
// one page about one disk.
func ruleDiskIncident(c *evalCtx) {
	type side struct{ zfs, smart []*tracked }
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
		}
	}
	serials := make([]string, 0, len(bySerial))
	for s := range bySerial {
		serials = append(serials, s)
	}
	sort.Strings(serials)
	for _, serial := range serials {
		s := bySerial[serial]
		if len(s.zfs) == 0 || len(s.smart) == 0 {
			continue
		}
		// ZFS's view first, then SMART's: "3 checksum errors and 8 pending sectors".
		sort.Slice(s.zfs, func(i, j int) bool { return lessAlert(&s.zfs[i].A, &s.zfs[j].A) })
		sort.Slice(s.smart, func(i, j int) bool { return lessAlert(&s.smart[i].A, &s.smart[j].A) })
		parts := append(append([]*tracked{}, s.zfs...), s.smart...)
		sev := alert.Info
		var news uint64
		var shorts, lines []string
		var repl *alert.Replacement
		for _, p := range parts {
			if p.A.Severity.Rank() > sev.Rank() {
				sev = p.A.Severity
			}
			news += p.News
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
		pool := ""
		if l := c.h.leafOfSerial(serial); l != nil {
			where += " in " + zfs.Place(l.Pool, l.Top)
			pool = l.Pool
		}
		c.emit(cond{name: nameDiskIncident, severity: sev, serial: serial, pool: pool, news: news,
			labels:   map[string]string{"disk": serial, "pool": pool},
			summary:  where + ": " + strings.Join(dedupe(shorts), " and "),
			desc:     fmt.Sprintf("ZFS and SMART both report trouble with disk %s:\n%s", serial, strings.Join(lines, "\n")),
			evidence: map[string]string{"parts": fmt.Sprint(len(parts))}, repl: repl})
	}
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
		if t.Serial != "" && t.A.State != alert.Resolved && strings.HasPrefix(t.Scope, scopeSmart) && t.A.Severity.Rank() >= alert.Warning.Rank() {
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
		for _, t := range ts {
			shorts = append(shorts, shortOf(&t.A))
		}
		m := l.Margin
		c.emit(cond{name: nameResilverAtRisk, severity: alert.Critical, serial: l.Serial, pool: l.Pool,
			labels:  map[string]string{"pool": l.Pool, "vdev": l.Top, "disk": l.Serial},
			summary: fmt.Sprintf("%s/%s is resilvering and %s shows SMART trouble: %s", l.Pool, l.Top, l.Serial, strings.Join(dedupe(shorts), " and ")),
			desc: fmt.Sprintf("Top-level vdev %s of pool %s is resilvering, so it has lost redundancy, and disk %s (%s) of that vdev reports SMART problems. If it fails before the resilver ends, data may be lost. Avoid load on the pool, check backups, and have another replacement ready.",
				l.Top, l.Pool, l.Serial, l.Name),
			repl: &alert.Replacement{Pool: l.Pool, TopVdev: l.Top, VdevPath: l.Path, VdevGUID: l.GUID, VdevState: l.State, Disk: c.h.identity(l.Serial), Margin: &m}})
	}
}
