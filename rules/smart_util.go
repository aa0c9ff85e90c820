package rules

import (
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }

// attr returns ATA attribute id of r, or nil.
func attr(r *smart.Report, id int) *smart.Attribute {
	for i := range r.Attributes {
		if r.Attributes[i].ID == id {
			return &r.Attributes[i]
		}
	}
	return nil
}

// rawCount is the count an attribute means. Vendors pack several counters
// into the 48-bit raw value (Seagate's 188 "0 0 0", 194 "35 (0 19 0 0 0)");
// smartctl's raw string starts with the one that matters.
func rawCount(a *smart.Attribute) uint64 {
	if s := strings.TrimSpace(a.RawString); s != "" {
		end := 0
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		if end > 0 {
			if v, err := strconv.ParseUint(s[:end], 10, 64); err == nil {
				return v
			}
		}
	}
	return a.Raw
}

// override finds the rules.smart.overrides entry for attribute id of r;
// a serial match wins over a model match.
func override(cfg *config.RulesConfig, r *smart.Report, id int) *config.SmartOverride {
	var byModel *config.SmartOverride
	for i := range cfg.Smart.Overrides {
		o := &cfg.Smart.Overrides[i]
		if o.Attribute != id {
			continue
		}
		if o.Serial != "" && o.Serial == r.Serial {
			return o
		}
		if o.Model != "" && byModel == nil {
			if ok, _ := path.Match(o.Model, r.Model); ok {
				byModel = o
			}
		}
	}
	return byModel
}

// limits applies an override to default limits; ignore reports a silenced attribute.
func limits(cfg *config.RulesConfig, r *smart.Report, id int, def config.AttrLimits) (l config.AttrLimits, ignore bool) {
	l = def
	if o := override(cfg, r, id); o != nil {
		if o.Ignore {
			return l, true
		}
		if o.Warning != nil {
			l.Warning = *o.Warning
		}
		if o.Critical != nil {
			l.Critical = *o.Critical
		}
	}
	return l, false
}

// level grades v against limits (0 turns a level off).
func level(v uint64, l config.AttrLimits) alert.Severity {
	switch {
	case l.Critical > 0 && v >= l.Critical:
		return alert.Critical
	case l.Warning > 0 && v >= l.Warning:
		return alert.Warning
	}
	return ""
}

// diskLabel is the label naming a disk: its serial, else its device.
func diskLabel(r *smart.Report) string {
	if r.Serial != "" {
		return r.Serial
	}
	return r.Device
}

// smartWhere is "WD-WX32D7088AF1 in vault/raidz2-0" or "WD-WX32D7088AF1 (/dev/sdc)".
func smartWhere(c *evalCtx, r *smart.Report) string {
	name := diskLabel(r)
	if l := c.h.leafOfSerial(r.Serial); l != nil {
		return name + " in " + zfs.Place(l.Pool, l.Top)
	}
	if r.Device != "" && r.Device != name {
		return name + " (" + r.Device + ")"
	}
	return name
}

// smartRepl is the replacement context of a disk SMART complains about.
func smartRepl(c *evalCtx, r *smart.Report) *alert.Replacement {
	id := identityOf(r)
	return diskRepl(c, r.Serial, &id)
}

// diskRepl is the replacement context of the disk with serial: where it
// sits in a pool, if it does, and the margin left there.
func diskRepl(c *evalCtx, serial string, id *disk.Identity) *alert.Replacement {
	rp := &alert.Replacement{Disk: id}
	if l := c.h.leafOfSerial(serial); l != nil {
		rp.Pool, rp.TopVdev, rp.VdevPath, rp.VdevGUID, rp.VdevState, rp.Was = l.Pool, l.Top, l.Path, l.GUID, l.State, l.Was
		if rp.VdevPath == "" {
			rp.VdevPath = l.Name
		}
		if m, ok := c.h.topMargin(l.Pool, l.Top); ok {
			rp.Margin = &m
		}
	}
	return rp
}

func smartEvidence(r *smart.Report) map[string]string {
	ev := map[string]string{}
	if r.Device != "" {
		ev["device"] = r.Device
	}
	if r.Model != "" {
		ev["model"] = r.Model
	}
	if r.PowerOnHours != nil {
		ev["power_on_hours"] = itoa(*r.PowerOnHours)
	}
	return ev
}
