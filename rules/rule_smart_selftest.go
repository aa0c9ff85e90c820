package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
)

func smartSelfTestRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Smart},
		Eval:  diskEval(ruleSmartSelfTest),
		Alerts: []AlertInfo{{
			Name:      nameSmartSelfTest,
			Severity:  "critical",
			Condition: "newest self-test failed (aborted/in progress are not failures)",
		}},
	}
}

// nameSmartSelfTest: the newest self-test failed ("Completed: read
// failure"). The drive found sectors it cannot read: critical. A test that
// was aborted by the host or is in progress is not a failure.
func ruleSmartSelfTest(c *evalCtx, r *smart.Report) {
	st := r.SelfTest
	if st == nil || st.Passed {
		return
	}
	low := strings.ToLower(st.Status)
	for _, benign := range []string{"in progress", "aborted by host", "interrupted", "never started"} {
		if strings.Contains(low, benign) {
			return
		}
	}
	ev := smartEvidence(r)
	ev["self_test"] = st.Type + ": " + st.Status
	c.emit(cond{name: nameSmartSelfTest, severity: alert.Critical, news: st.LifetimeHours,
		labels:  map[string]string{"disk": diskLabel(r)},
		summary: fmt.Sprintf("%s: SMART %s self-test failed", smartWhere(c, r), strings.ToLower(st.Type)),
		desc: fmt.Sprintf("The last self-test of %s %s ended \"%s\" at %d power-on hours. The disk cannot read part of its surface: replace it.",
			r.Model, diskLabel(r), st.Status, st.LifetimeHours),
		evidence: ev, repl: smartRepl(c, r)})
}
