package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
)

func nvmeRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Smart},
		Eval:  diskEval(ruleNVMe),
		Config: []config.RuleSection{
			smartConfig,
		},
		Alerts: []AlertInfo{{
			Name:      nameNVMeCriticalWarning,
			Severity:  "critical",
			Condition: "critical_warning bits, decoded (spare, temperature, reliability, read-only, backup, PMR)",
		}, {
			Name:       nameNVMeMediaErrors,
			Thresholds: smartConfig.thresholds("nvme_media_errors.warning", "nvme_media_errors.critical"),
			Severity:   "per `smart.nvme_media_errors` ({smart.nvme_media_errors.warning}/{smart.nvme_media_errors.critical})",
			Condition:  "media/data integrity errors; sent again at 10, 100, … errors",
		}, {
			Name:       nameNVMeSpare,
			Thresholds: smartConfig.thresholds("nvme_spare_warning"),
			Severity:   "critical ≤ the drive's threshold, warning ≤ `nvme_spare_warning` ({smart.nvme_spare_warning} %)",
			Condition:  "available spare; none when the drive reports 0 % spare with a 0 % threshold (no spare reporting)",
		}, {
			Name:       nameNVMeWearout,
			Thresholds: smartConfig.thresholds("nvme_used_warning"),
			Severity:   "warning",
			Condition:  "percentage_used ≥ `nvme_used_warning` ({smart.nvme_used_warning})",
		}},
	}
}

// nvmeWarningBits decodes the NVMe critical_warning byte (NVMe base spec,
// SMART / Health Information log, byte 0).
func nvmeWarningBits(v uint64) []string {
	names := [...]string{
		"available spare below threshold",
		"temperature outside limits",
		"reliability degraded by media or internal errors",
		"media placed in read-only mode",
		"volatile memory backup failed",
		"persistent memory region read-only",
	}
	var out []string
	for i, n := range names {
		if v&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	if v>>len(names) != 0 {
		out = append(out, fmt.Sprintf("unknown bits 0x%x", v>>len(names)<<len(names)))
	}
	return out
}

// nameNVMe: the NVMe health log. A set critical-warning bit is the drive
// asking for replacement (critical); media errors are unrecovered data
// integrity errors, sent again when their count reaches the next power of
// ten; available spare nearing its threshold and endurance used past
// rules.smart.nvme_used_warning warn of the end of the drive's life.
//
// A drive that reports 0 % spare with a 0 % threshold does not report its
// spare at all (QEMU's emulated NVMe does exactly that,
// testdata/captured/zfs-2.3.2/a.smartctl-a-json-nvme.json): a real drive
// at 0 % would have a threshold above it and set critical_warning bit 0,
// which NVMeCriticalWarning reports anyway.
func ruleNVMe(c *evalCtx, r *smart.Report) {
	n := r.NVMe
	if n == nil {
		return
	}
	where, settings := smartWhere(c, r), smartConfig.of(c.cfg)
	labels := func() map[string]string { return map[string]string{"disk": diskLabel(r)} }
	if n.CriticalWarning != 0 {
		bits := nvmeWarningBits(n.CriticalWarning)
		ev := smartEvidence(r)
		ev["critical_warning"] = fmt.Sprintf("0x%02x", n.CriticalWarning)
		c.emit(cond{name: nameNVMeCriticalWarning, severity: alert.Critical, news: n.CriticalWarning,
			labels:   labels(),
			summary:  fmt.Sprintf("%s: NVMe critical warning: %s", where, strings.Join(bits, ", ")),
			desc:     fmt.Sprintf("%s %s raised critical warning 0x%02x: %s.", r.Model, diskLabel(r), n.CriticalWarning, strings.Join(bits, "; ")),
			evidence: ev, repl: smartRepl(c, r)})
	}
	if sev := level(n.MediaErrors, settings.MediaErrors); sev != "" {
		ev := smartEvidence(r)
		ev["media_errors"] = itoa(n.MediaErrors)
		c.emit(cond{name: nameNVMeMediaErrors, severity: sev, count: n.MediaErrors,
			labels:   labels(),
			summary:  fmt.Sprintf("%s: %d NVMe media errors", where, n.MediaErrors),
			desc:     fmt.Sprintf("%s %s reports %d unrecovered media/data integrity errors.", r.Model, diskLabel(r), n.MediaErrors),
			evidence: ev, repl: smartRepl(c, r)})
	}
	spareThr := n.AvailableSpareThreshold
	reportsSpare := n.AvailableSpare > 0 || spareThr > 0
	if reportsSpare && (n.AvailableSpare < 100 || spareThr > 0) {
		var sev alert.Severity
		switch {
		case spareThr > 0 && n.AvailableSpare <= spareThr:
			sev = alert.Critical
		case int(n.AvailableSpare) <= settings.NVMeSpareWarning:
			sev = alert.Warning
		}
		if sev != "" {
			ev := smartEvidence(r)
			ev["available_spare"], ev["available_spare_threshold"] = itoa(n.AvailableSpare), itoa(spareThr)
			c.emit(cond{name: nameNVMeSpare, severity: sev,
				labels:   labels(),
				summary:  fmt.Sprintf("%s: NVMe spare at %d%%", where, n.AvailableSpare),
				desc:     fmt.Sprintf("%s %s has %d%% of its spare blocks left (drive threshold %d%%).", r.Model, diskLabel(r), n.AvailableSpare, spareThr),
				evidence: ev, repl: smartRepl(c, r)})
		}
	}
	if int(n.PercentageUsed) >= settings.NVMeUsedWarning {
		ev := smartEvidence(r)
		ev["percentage_used"] = itoa(n.PercentageUsed)
		c.emit(cond{name: nameNVMeWearout, severity: alert.Warning,
			labels:   labels(),
			summary:  fmt.Sprintf("%s: %d%% of rated endurance used", where, n.PercentageUsed),
			desc:     fmt.Sprintf("%s %s has used %d%% of its rated write endurance. Plan its replacement.", r.Model, diskLabel(r), n.PercentageUsed),
			evidence: ev})
	}
}
