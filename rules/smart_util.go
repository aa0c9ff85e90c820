package rules

import (
	"fmt"
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

// smartSettings are rules.smart: SMART thresholds, read by every SMART
// rule. Attribute limits are raw values; 0 turns a level off. Defaults
// follow Backblaze's drive statistics: any non-zero raw value of 5, 187,
// 188, 197 or 198 multiplies the failure rate.
type smartSettings struct {
	Reallocated       attrLimits `yaml:"reallocated" doc:"5" note:"ATA attribute increases: first increase is a warning, this total is critical\n(defaults informed by Backblaze's drive statistics)."`
	ReportedUncorrect attrLimits `yaml:"reported_uncorrect" doc:"187"`
	CommandTimeout    attrLimits `yaml:"command_timeout" doc:"188"`
	Pending           attrLimits `yaml:"pending" doc:"197"`
	OfflineUncorrect  attrLimits `yaml:"offline_uncorrectable" doc:"198"`
	// CRCWarning: UDMA CRC errors (199) at or above this warn about the
	// cable or USB enclosure.
	CRCWarning   uint64     `yaml:"crc_warning" doc:"199 UDMA CRC: a cable or USB enclosure problem, not the disk"`
	GrownDefects attrLimits `yaml:"grown_defects" doc:"SAS grown defect list"`
	MediaErrors  attrLimits `yaml:"nvme_media_errors"`
	// Temperatures in °C, used where the drive reports no thresholds itself.
	HDDTempWarning  int `yaml:"hdd_temp_warning" doc:"°C, used when the drive reports no limits of its own"`
	HDDTempCritical int `yaml:"hdd_temp_critical"`
	SSDTempWarning  int `yaml:"ssd_temp_warning"`
	SSDTempCritical int `yaml:"ssd_temp_critical"`
	// NVMeSpareWarning: available spare (%) at or below this warns; at or
	// below the drive's own threshold is critical.
	NVMeSpareWarning int `yaml:"nvme_spare_warning" doc:"available spare percent"`
	// NVMeUsedWarning: percentage_used (endurance consumed) at or above this warns.
	NVMeUsedWarning int `yaml:"nvme_used_warning" doc:"percentage used (wear)"`
	// Overrides silence or re-threshold one attribute of one disk or model
	// whose vendor reports bogus values.
	Overrides []smartOverride `yaml:"overrides" note:"Per-disk or per-model overrides for known-bogus vendor values:\noverrides:\n  - model: \"Samsung SSD 860 EVO 1TB\"\n    attribute: 199\n    ignore: true\n  - serial: WD-WX32D7088AF1\n    attribute: 5\n    warning: 8"`
}

// attrLimits are the raw-value levels of one counter attribute.
type attrLimits struct {
	Warning  uint64 `yaml:"warning"`
	Critical uint64 `yaml:"critical"`
}

// smartOverride applies to the disks matching Serial (exact) or Model (a
// glob such as "ST4000DM004*"). Attribute is an ATA id (5, 187, 188, 194 for
// temperature in °C, 197, 198, 199).
type smartOverride struct {
	Serial    string  `yaml:"serial"`
	Model     string  `yaml:"model"`
	Attribute int     `yaml:"attribute"`
	Ignore    bool    `yaml:"ignore"`
	Warning   *uint64 `yaml:"warning"`
	Critical  *uint64 `yaml:"critical"`
}

var smartConfig = defineConfig("smart", smartSettings{
	Reallocated:       attrLimits{Warning: 1, Critical: 50},
	ReportedUncorrect: attrLimits{Warning: 1, Critical: 10},
	CommandTimeout:    attrLimits{Warning: 1, Critical: 100},
	Pending:           attrLimits{Warning: 1, Critical: 10},
	OfflineUncorrect:  attrLimits{Warning: 1, Critical: 10},
	CRCWarning:        1,
	GrownDefects:      attrLimits{Warning: 1, Critical: 100},
	MediaErrors:       attrLimits{Warning: 1, Critical: 10},
	HDDTempWarning:    55, HDDTempCritical: 60,
	SSDTempWarning: 70, SSDTempCritical: 80,
	NVMeSpareWarning: 20, NVMeUsedWarning: 90,
})

func (s smartSettings) validate(p string, errs *config.Errors) {
	for _, a := range []struct {
		key string
		l   attrLimits
	}{{"reallocated", s.Reallocated}, {"reported_uncorrect", s.ReportedUncorrect}, {"command_timeout", s.CommandTimeout},
		{"pending", s.Pending}, {"offline_uncorrectable", s.OfflineUncorrect}, {"grown_defects", s.GrownDefects}, {"nvme_media_errors", s.MediaErrors}} {
		if a.l.Critical != 0 && a.l.Warning > a.l.Critical {
			errs.Add(p+"."+a.key+".warning", a.l.Warning, "must not exceed %s.critical (%d)", a.key, a.l.Critical)
		}
	}
	temps := []struct {
		key  string
		w, c int
	}{{"hdd_temp", s.HDDTempWarning, s.HDDTempCritical}, {"ssd_temp", s.SSDTempWarning, s.SSDTempCritical}}
	for _, t := range temps {
		if t.w < 20 || t.w > 100 {
			errs.Add(p+"."+t.key+"_warning", t.w, "must be 20 to 100 (°C)")
		}
		if t.c <= t.w || t.c > 120 {
			errs.Add(p+"."+t.key+"_critical", t.c, "must be above %s_warning (%d) and at most 120 (°C)", t.key, t.w)
		}
	}
	if s.NVMeSpareWarning < 0 || s.NVMeSpareWarning > 100 {
		errs.Add(p+".nvme_spare_warning", s.NVMeSpareWarning, "must be 0 to 100 (%%)")
	}
	if s.NVMeUsedWarning < 1 || s.NVMeUsedWarning > 255 {
		errs.Add(p+".nvme_used_warning", s.NVMeUsedWarning, "must be 1 to 255 (%% of rated endurance)")
	}
	for i, o := range s.Overrides {
		o.validate(fmt.Sprintf("%s.overrides[%d]", p, i), errs)
	}
}

func (o smartOverride) validate(op string, errs *config.Errors) {
	if (o.Serial == "") == (o.Model == "") {
		errs.Add(op, nil, "set exactly one of serial or model")
	}
	if o.Model != "" {
		if _, err := path.Match(o.Model, ""); err != nil {
			errs.Add(op+".model", o.Model, "not a valid glob: %v", err)
		}
	}
	switch o.Attribute {
	case 5, 187, 188, 194, 197, 198, 199:
	default:
		errs.Add(op+".attribute", o.Attribute, "must be one of 5, 187, 188, 194 (temperature), 197, 198, 199")
	}
	if o.Ignore == (o.Warning != nil || o.Critical != nil) {
		errs.Add(op, nil, "set either ignore: true or warning/critical thresholds")
	}
	if o.Warning != nil && o.Critical != nil && *o.Warning > *o.Critical {
		errs.Add(op+".warning", *o.Warning, "must not exceed critical (%d)", *o.Critical)
	}
}

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
func override(cfg *config.RulesConfig, r *smart.Report, id int) *smartOverride {
	var byModel *smartOverride
	overrides := smartConfig.of(cfg).Overrides
	for i := range overrides {
		o := &overrides[i]
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
func limits(cfg *config.RulesConfig, r *smart.Report, id int, def attrLimits) (l attrLimits, ignore bool) {
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
func level(v uint64, l attrLimits) alert.Severity {
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
