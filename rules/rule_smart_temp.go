package rules

import (
	"fmt"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
)

func smartTemperatureRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Smart},
		Eval:  diskEval(ruleSmartTemperature),
		Config: []config.RuleSection{
			smartConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameSmartTemperature,
			For:        10 * time.Minute,
			Thresholds: smartConfig.thresholds("hdd_temp_warning", "hdd_temp_critical", "ssd_temp_warning", "ssd_temp_critical"),
			Severity:   "warning / critical",
			Condition: "over the drive's own limits, else `hdd_temp_*` ({smart.hdd_temp_warning}/{smart.hdd_temp_critical} °C) " +
				"or `ssd_temp_*` ({smart.ssd_temp_warning}/{smart.ssd_temp_critical} °C); `for` {for}",
		}},
	}
}

// nameSmartTemperature: a disk hotter than its limits. The drive's own
// thresholds win where it reports them (NVMe WCTEMP/CCTEMP, SCT limits, SCSI
// drive trip); otherwise rules.smart.{hdd,ssd}_temp_*; an override for
// attribute 194 beats both. A failed fan shows here before anything else.
func ruleSmartTemperature(c *evalCtx, r *smart.Report) {
	if r.TemperatureC == nil || r.InStandby {
		return
	}
	t := *r.TemperatureC
	warn, crit, src, ignore := temperatureLimits(c.cfg, r)
	if ignore {
		return
	}
	var sev alert.Severity
	switch {
	case t >= crit:
		sev = alert.Critical
	case t >= warn:
		sev = alert.Warning
	default:
		return
	}
	ev := smartEvidence(r)
	ev["temperature_c"] = fmt.Sprint(t)
	c.emit(cond{name: nameSmartTemperature, severity: sev,
		labels:  map[string]string{"disk": diskLabel(r)},
		summary: fmt.Sprintf("%s is at %d °C", smartWhere(c, r), t),
		desc: fmt.Sprintf("%s %s is at %d °C (warning %d, critical %d, from %s). Check fans, airflow and dust filters.",
			r.Model, diskLabel(r), t, warn, crit, src),
		evidence: ev})
}

// temperatureLimits are the warning and critical temperatures of a disk
// and where they come from: the drive's own thresholds where it reports
// them (NVMe WCTEMP/CCTEMP, SCT limits, SCSI drive trip), otherwise
// rules.smart.{hdd,ssd}_temp_*; an override for attribute 194 beats both,
// or silences the disk (ignore).
func temperatureLimits(cfg *config.RulesConfig, r *smart.Report) (warn, crit int, src string, ignore bool) {
	s := smartConfig.of(cfg)
	warn, crit = s.HDDTempWarning, s.HDDTempCritical
	kind := "HDD"
	if (r.RotationRPM != nil && *r.RotationRPM == 0) || r.Transport == disk.TransportNVMe || r.NVMe != nil {
		warn, crit, kind = s.SSDTempWarning, s.SSDTempCritical, "SSD"
	}
	src = "configured " + kind + " limits"
	if r.TempWarnC != nil && *r.TempWarnC > 0 {
		warn, src = *r.TempWarnC, "the drive's own limits"
	}
	if r.TempCritC != nil && *r.TempCritC > 0 {
		crit, src = *r.TempCritC, "the drive's own limits"
	}
	if crit <= warn {
		crit = warn + 5
	}
	if o := override(cfg, r, 194); o != nil {
		if o.Ignore {
			return warn, crit, "an override", true
		}
		if o.Warning != nil {
			warn = int(*o.Warning)
		}
		if o.Critical != nil {
			crit = int(*o.Critical)
		}
		src = "an override"
	}
	return warn, crit, src, false
}
