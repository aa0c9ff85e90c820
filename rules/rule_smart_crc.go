package rules

import (
	"fmt"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
)

func smartCRCRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Smart},
		Eval:  diskEval(ruleSmartCRC),
		Config: []config.RuleSection{
			smartConfig, errorsConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameSmartCRC,
			Thresholds: []Threshold{smartConfig.threshold("crc_warning"), errorsConfig.threshold("hold")},
			Severity:   "warning",
			Condition:  "199 UDMA CRC rose (≥ `smart.crc_warning`); names the cable/backplane or USB enclosure, not the disk; holds `errors.hold`",
		}},
	}
}

// nameSmartCRC: UDMA CRC errors (199) are corrupted transfers between disk
// and controller — the cable, backplane or USB bridge, not the platters. The
// counter never resets, so the alert is about increases: it holds for
// rules.errors.hold after the last one, and names the link to fix.
func ruleSmartCRC(c *evalCtx, r *smart.Report) {
	a := attr(r, 199)
	if a == nil || r.Serial == "" {
		return
	}
	d := c.h.Disks[r.Serial]
	if d == nil {
		return
	}
	v := rawCount(a)
	l, ignore := limits(c.cfg, r, 199, cfgLimits(smartConfig.of(c.cfg).CRCWarning))
	if v > d.CRC || (!d.CRCSeen && v > 0) {
		d.CRCAt = c.now
		c.h.dirty = true
	}
	if d.CRC != v || !d.CRCSeen {
		d.CRC, d.CRCSeen = v, true
		c.h.dirty = true
	}
	if ignore || l.Warning == 0 || v < l.Warning || d.CRCAt.IsZero() || c.now.Sub(d.CRCAt) >= errorsConfig.of(c.cfg).Hold.D() {
		return
	}
	link := "the SATA/SAS cable or backplane slot"
	if r.Transport == disk.TransportUSB || r.Transport == "usb" {
		link = "the USB enclosure, its bridge or USB cable"
	}
	where := r.Device
	if where == "" {
		where = diskLabel(r)
	}
	ev := smartEvidence(r)
	ev["raw"] = itoa(v)
	c.emit(cond{name: nameSmartCRC, severity: alert.Warning, count: v,
		labels:  map[string]string{"disk": diskLabel(r)},
		summary: fmt.Sprintf("%s: %d link CRC errors — check %s, not the disk", smartWhere(c, r), v, link),
		desc: fmt.Sprintf("UDMA CRC errors (attribute 199) on %s rose to %d. The disk is probably fine: transfers to it get corrupted on the way. Reseat or replace %s (at %s).",
			diskLabel(r), v, link, where),
		evidence: ev})
}

func cfgLimits(warn uint64) attrLimits { return attrLimits{Warning: warn} }
