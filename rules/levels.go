package rules

import (
	"slices"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// Levels are the warning and critical levels a rule applies to one
// reading, for showing beside it (the performance data of `zwatch check`).
// The rule raises its alert when the reading is at or above a level; a
// nil level is one the rule does not have or config turned off.
type Levels struct {
	Warning, Critical *float64
}

func levelsOf(warn, crit float64) Levels { return Levels{Warning: &warn, Critical: &crit} }

// Enabled reports whether config leaves the alert name on (rules.disabled).
func Enabled(cfg *config.RulesConfig, name string) bool {
	return !slices.Contains(cfg.Disabled, name)
}

// PoolFullness is how full a pool is as PoolCapacity judges it: the larger
// of zpool list's CAP and the root dataset's used/(used+avail).
func PoolFullness(p *zfs.PoolList, datasets []zfs.Dataset) float64 {
	return usableFullness(p, datasets)
}

// CapacityLevels are PoolCapacity's rules.capacity.warning and critical.
func CapacityLevels(cfg *config.RulesConfig) Levels {
	if !Enabled(cfg, namePoolCapacity) {
		return Levels{}
	}
	c := capacityConfig.of(cfg)
	return levelsOf(c.Warning, c.Critical)
}

// ScrubAgeLevels is ScrubOverdue's rules.scrub.max_age in seconds, a
// warning only (the alert has no critical level).
func ScrubAgeLevels(cfg *config.RulesConfig) Levels {
	if !Enabled(cfg, nameScrubOverdue) {
		return Levels{}
	}
	w := scrubConfig.of(cfg).MaxAge.D().Seconds()
	return Levels{Warning: &w}
}

// TemperatureLevels are the levels SmartTemperature applies to the disk of
// r, in °C; false when the disk's temperature is not judged (an override
// ignores it, or the alert is disabled).
func TemperatureLevels(cfg *config.RulesConfig, r *smart.Report) (Levels, bool) {
	warn, crit, _, ignore := temperatureLimits(cfg, r)
	if ignore || !Enabled(cfg, nameSmartTemperature) {
		return Levels{}, false
	}
	return levelsOf(float64(warn), float64(crit)), true
}

// SmartCounter is the raw count of ATA attribute id (5 reallocated, 197
// pending, or another counter SmartAttribute judges) of r, as the rule
// reads it, with the rule's levels for it; false when r has no such
// attribute. A level of 0 is off, and so is nil here.
func SmartCounter(cfg *config.RulesConfig, r *smart.Report, id int) (uint64, Levels, bool) {
	a := attr(r, id)
	if a == nil {
		return 0, Levels{}, false
	}
	var l Levels
	for _, sc := range smartCounters() {
		if sc.id != id {
			continue
		}
		if lim, ignore := limits(cfg, r, id, sc.limit(smartConfig.of(cfg))); !ignore && Enabled(cfg, nameSmartAttribute) {
			l = attrLevels(lim)
		}
	}
	return rawCount(a), l, true
}

// VdevErrorLevels: VdevErrors warns at the first READ, WRITE or CKSUM
// error a vdev shows (a rise since the last reading; a first reading
// counts in full).
func VdevErrorLevels(cfg *config.RulesConfig) Levels {
	if !Enabled(cfg, nameVdevErrors) {
		return Levels{}
	}
	w := 1.0
	return Levels{Warning: &w}
}

// NVMeMediaErrorLevels are NVMeMediaErrors' rules.smart.nvme_media_errors
// levels; a level of 0 is off, and so is nil here.
func NVMeMediaErrorLevels(cfg *config.RulesConfig) Levels {
	if !Enabled(cfg, nameNVMeMediaErrors) {
		return Levels{}
	}
	return attrLevels(smartConfig.of(cfg).MediaErrors)
}

func attrLevels(lim attrLimits) Levels {
	var l Levels
	if lim.Warning > 0 {
		w := float64(lim.Warning)
		l.Warning = &w
	}
	if lim.Critical > 0 {
		c := float64(lim.Critical)
		l.Critical = &c
	}
	return l
}
