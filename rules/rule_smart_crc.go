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

func smartCRCRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Smart},
		Eval:  diskEval(ruleSmartCRC),
		Config: []config.RuleSection{
			smartConfig, errorsConfig,
		},
		Memory: []memoryDef{smartCRCMemory},
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
	if c.h.Disks[r.Serial] == nil {
		return // not joined yet: its count is remembered once it is
	}
	v := rawCount(a)
	l, ignore := limits(c.cfg, r, 199, cfgLimits(smartConfig.of(c.cfg).CRCWarning))
	d, first := smartCRCMemory.of(c.h).link(c.h, r.Serial)
	if v > d.Count || (first && v > 0) {
		d.At = c.now
		c.h.dirty = true
	}
	if first || v != d.Count {
		d.Count = v
		c.h.dirty = true
	}
	if ignore || l.Warning == 0 || v < l.Warning || d.At.IsZero() || c.now.Sub(d.At) >= errorsConfig.of(c.cfg).Hold.D() {
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

// crcLink is what SmartCRC remembers of one disk's link: the last UDMA CRC
// count read, and when it last rose.
type crcLink struct {
	Count uint64    `json:"count"`
	At    time.Time `json:"at,omitzero"`
}

// crcLinks are SmartCRC's memory of a host: each disk's link, by serial,
// for the disks the join knows (hostState.Disks), so at most as many.
type crcLinks struct {
	Disks map[string]*crcLink `json:"disks,omitempty"`
}

// smartCRCMemory: 41d2458 kept each count in the join's disk entry
// (diskRef.legacyCRC, moved here by decodeHost).
var smartCRCMemory = remember("smart_crc", 1, sameShape[crcLinks])

// link is serial's entry, made on first use (first); the entries of disks
// the join no longer knows are dropped then.
func (m *crcLinks) link(h *hostState, serial string) (l *crcLink, first bool) {
	if l := m.Disks[serial]; l != nil {
		return l, false
	}
	if m.Disks == nil {
		m.Disks = map[string]*crcLink{}
	}
	for s := range m.Disks {
		if h.Disks[s] == nil {
			delete(m.Disks, s)
		}
	}
	l = &crcLink{}
	m.Disks[serial] = l
	return l, true
}

// moveLegacyCRC puts the CRC counts a state of 41d2458 kept in its disk
// entries into SmartCRC's memory, unless the state has that memory.
func moveLegacyCRC(h *hostState) {
	if h.Memory[smartCRCMemory.name] != nil {
		return
	}
	var links crcLinks
	for serial, d := range h.Disks {
		if d.legacyCRC != nil {
			if links.Disks == nil {
				links.Disks = map[string]*crcLink{}
			}
			links.Disks[serial], d.legacyCRC = d.legacyCRC, nil
		}
	}
	if links.Disks != nil {
		smartCRCMemory.of(h).Disks = links.Disks
	}
}
