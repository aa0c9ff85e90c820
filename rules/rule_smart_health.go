package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
)

func smartHealthRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Smart},
		Eval:  diskEval(ruleSmartHealth),
		Alerts: []AlertInfo{{
			Name:      nameSmartFailed,
			Severity:  "critical",
			Condition: "overall health FAILED",
		}},
	}
}

// nameSmartHealth: the drive itself says it is failing (overall health
// FAILED, or a prefail attribute below its threshold "now"). Critical:
// drives that admit this rarely last.
func ruleSmartHealth(c *evalCtx, r *smart.Report) {
	if r.SmartPassed == nil || *r.SmartPassed {
		return
	}
	var failing []string
	for _, a := range r.Attributes {
		if a.WhenFailed == "now" {
			failing = append(failing, fmt.Sprintf("%d %s (value %d, threshold %d)", a.ID, a.Name, a.Value, a.Thresh))
		}
	}
	desc := fmt.Sprintf("smartctl reports overall health FAILED for %s %s. Back up what lives only on it and replace it.", r.Model, diskLabel(r))
	if len(failing) > 0 {
		desc += "\nFailing now: " + strings.Join(failing, "; ")
	}
	c.emit(cond{name: nameSmartFailed, severity: alert.Critical,
		labels:  map[string]string{"disk": diskLabel(r)},
		summary: smartWhere(c, r) + ": SMART health FAILED",
		desc:    desc, evidence: smartEvidence(r), repl: smartRepl(c, r)})
}
