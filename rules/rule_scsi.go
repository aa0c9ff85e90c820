package rules

import (
	"fmt"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
)

func scsiDefectsRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Smart},
		Eval:  diskEval(ruleSCSIDefects),
		Config: []config.RuleSection{
			smartConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameSCSIGrownDefects,
			Thresholds: smartConfig.thresholds("grown_defects.warning", "grown_defects.critical"),
			Severity:   "per `smart.grown_defects` ({smart.grown_defects.warning}/{smart.grown_defects.critical})",
			Condition:  "SAS grown defect list",
		}},
	}
}

// nameSCSIDefects: SAS/SCSI disks have no ATA attributes; their grown
// defect list (sectors remapped since manufacture) plays the part of 5.
// Uncorrected read/write/verify errors are shown as evidence.
func ruleSCSIDefects(c *evalCtx, r *smart.Report) {
	if r.SCSI == nil || r.SCSI.GrownDefects == nil {
		return
	}
	v := *r.SCSI.GrownDefects
	sev := level(v, smartConfig.of(c.cfg).GrownDefects)
	if sev == "" {
		return
	}
	ev := smartEvidence(r)
	ev["grown_defects"] = itoa(v)
	for k, p := range map[string]*uint64{"read_uncorrected": r.SCSI.ReadUncorrected, "write_uncorrected": r.SCSI.WriteUncorrected, "verify_uncorrected": r.SCSI.VerifyUncorrected} {
		if p != nil {
			ev[k] = itoa(*p)
		}
	}
	c.emit(cond{name: nameSCSIGrownDefects, severity: sev, count: v,
		labels:   map[string]string{"disk": diskLabel(r)},
		summary:  fmt.Sprintf("%s: %d grown defects", smartWhere(c, r), v),
		desc:     fmt.Sprintf("The grown defect list of %s %s holds %d sectors. A growing list means the surface is failing.", r.Model, diskLabel(r), v),
		evidence: ev, repl: smartRepl(c, r)})
}
