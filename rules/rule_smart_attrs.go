package rules

import (
	"fmt"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
)

func smartAttributesRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Smart},
		Eval:  diskEval(ruleSmartAttributes),
		Config: []config.RuleSection{
			smartConfig,
		},
		Alerts: []AlertInfo{{
			Name: nameSmartAttribute,
			Thresholds: smartConfig.thresholds(
				"reallocated.warning", "reallocated.critical",
				"reported_uncorrect.warning", "reported_uncorrect.critical",
				"command_timeout.warning", "command_timeout.critical",
				"pending.warning", "pending.critical",
				"offline_uncorrectable.warning", "offline_uncorrectable.critical",
			),
			Severity: "per `smart.<attr>.warning/critical`",
			Condition: "raw 5 (reallocated {smart.reallocated.warning}/{smart.reallocated.critical}), " +
				"187 ({smart.reported_uncorrect.warning}/{smart.reported_uncorrect.critical}), " +
				"188 ({smart.command_timeout.warning}/{smart.command_timeout.critical}), " +
				"197 (pending {smart.pending.warning}/{smart.pending.critical}), " +
				"198 ({smart.offline_uncorrectable.warning}/{smart.offline_uncorrectable.critical}); sent again when the raw value reaches 10, 100, …",
		}},
	}
}

// smartCounter is one ATA counter attribute and how people call it.
type smartCounter struct {
	id    int
	what  string // "reallocated sectors"
	limit func(smartSettings) attrLimits
}

// smartCounters: the five attributes Backblaze found most predictive of
// failure. Any non-zero raw value raises the annualised failure rate many
// times, so the default warning is 1; critical levels are where failure
// becomes likely within months.
func smartCounters() []smartCounter {
	return []smartCounter{
		{5, "reallocated sectors", func(s smartSettings) attrLimits { return s.Reallocated }},
		{187, "reported uncorrectable errors", func(s smartSettings) attrLimits { return s.ReportedUncorrect }},
		{188, "command timeouts", func(s smartSettings) attrLimits { return s.CommandTimeout }},
		{197, "pending sectors", func(s smartSettings) attrLimits { return s.Pending }},
		{198, "offline uncorrectable sectors", func(s smartSettings) attrLimits { return s.OfflineUncorrect }},
	}
}

// nameSmartAttributes: a counter at or above its level. The alert carries
// the raw value as its count, so it is sent again when the value reaches
// the next power of ten (a few more pending sectors are not news); a steady
// value is only repeated on the repeat interval. Per-disk or per-model overrides
// silence or re-threshold a vendor's bogus counter.
func ruleSmartAttributes(c *evalCtx, r *smart.Report) {
	settings := smartConfig.of(c.cfg)
	for _, sc := range smartCounters() {
		a := attr(r, sc.id)
		if a == nil {
			continue
		}
		l, ignore := limits(c.cfg, r, sc.id, sc.limit(settings))
		if ignore {
			continue
		}
		v := rawCount(a)
		sev := level(v, l)
		if sev == "" {
			continue
		}
		ev := smartEvidence(r)
		ev["attribute"] = fmt.Sprintf("%d %s", a.ID, a.Name)
		ev["raw"] = itoa(v)
		c.emit(cond{name: nameSmartAttribute, severity: sev, count: v,
			labels:  map[string]string{"disk": diskLabel(r), "attribute": fmt.Sprint(sc.id)},
			summary: fmt.Sprintf("%s: %d %s", smartWhere(c, r), v, sc.what),
			desc: fmt.Sprintf("SMART attribute %d (%s) of %s %s is %d (warning at %d, critical at %d). Drives with growing counts here fail far more often: make sure the data has redundancy and plan a replacement.",
				a.ID, a.Name, r.Model, diskLabel(r), v, l.Warning, l.Critical),
			evidence: ev, repl: smartRepl(c, r)})
	}
}
