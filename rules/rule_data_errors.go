package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

func poolDataErrorsRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus},
		Eval:  poolEval(rulePoolDataErrors),
		Alerts: []AlertInfo{{
			Name:      namePoolDataErrors,
			For:       errorsSettle, // the writes a pool loses as it suspends
			Severity:  "critical",
			Condition: fmt.Sprintf("permanent errors, with the affected files (first %d); `for` {for}", maxFiles),
		}},
	}
}

// maxFiles bounds the files an alert lists: a person needs the first ones
// and the count, and an alert must stay small enough for any channel.
const maxFiles = 50

// namePoolDataErrors: permanent errors — data ZFS could not repair. Critical,
// and sent again when the count reaches the next power of ten (10, 100, …).
func rulePoolDataErrors(c *evalCtx, p *zfs.Pool) {
	n := p.DataErrors.Count
	if n < len(p.DataErrors.Files) {
		n = len(p.DataErrors.Files)
	}
	if n <= 0 && p.ErrorsUnknown {
		// The input did not say (no errors: line, a suspended pool): that is
		// not "no errors", so an alert already firing stays as it is.
		labels := map[string]string{"pool": p.Name}
		if prev := c.previous(namePoolDataErrors, labels); prev != nil {
			c.emit(cond{
				name: namePoolDataErrors, severity: prev.A.Severity, pool: p.Name, news: prev.News, labels: labels,
				summary: prev.A.Summary, desc: prev.A.Description, evidence: prev.A.Evidence,
			})
		}
		return
	}
	if n <= 0 {
		return
	}
	files := p.DataErrors.Files
	more := ""
	if len(files) > maxFiles {
		more = fmt.Sprintf("\n... and %d more (zpool status -v %s)", len(files)-maxFiles, p.Name)
		files = files[:maxFiles]
	}
	desc := fmt.Sprintf("ZFS found %d data error(s) it could not repair in pool %s. Restore the affected files from backup, then run a scrub.", n, p.Name)
	if len(files) > 0 {
		desc += "\nAffected files:\n  " + strings.Join(files, "\n  ") + more
	} else {
		desc += fmt.Sprintf(" Run `zpool status -v %s` to list the affected files.", p.Name)
	}
	ev := map[string]string{"count": fmt.Sprint(n)}
	if len(files) > 0 {
		ev["files"] = strings.Join(files, "\n")
	}
	summary := fmt.Sprintf("pool %s has %d permanent data error(s)", p.Name, n)
	if len(files) == 1 {
		summary += ": " + files[0]
	}
	c.emit(cond{
		name: namePoolDataErrors, severity: alert.Critical, pool: p.Name, count: uint64(n),
		labels:  map[string]string{"pool": p.Name},
		summary: summary, desc: desc, evidence: ev,
	})
}
