package config

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// KernelRules: disk, link and controller errors in the kernel log.
type KernelRules struct {
	// BurstGap: records about one disk closer together than this are one
	// burst (a controller reset logs dozens of lines in a second).
	BurstGap Duration `yaml:"burst_gap"`
	// Bursts within Window on one disk are critical; the first is a warning.
	Bursts int      `yaml:"bursts"`
	Window Duration `yaml:"window"`
	// Clear: a disk the kernel has logged nothing about for this long is
	// resolved.
	Clear Duration `yaml:"clear"`
}

// SlowIORules: I/Os ZFS saw take longer than zio_slow_io_ms, and I/O that hangs.
type SlowIORules struct {
	// Rises: a device whose slow-I/O counter rose in this many polls within
	// Window is SlowIO.
	Rises  int      `yaml:"rises"`
	Window Duration `yaml:"window"`
	// Clear: SlowIO and IOHung resolve after this long without a new slow
	// I/O or deadman event.
	Clear Duration `yaml:"clear"`
}

// DiskRules: disks that leave the machine outside a pool.
type DiskRules struct {
	// Ignore lists serial or by-id globs (path.Match) of disks that come and
	// go on purpose (a rotated USB backup disk): DiskVanished skips them.
	Ignore []string `yaml:"ignore"`
}

// DatasetRules: which datasets the lock and mount rules leave alone.
type DatasetRules struct {
	// Ignore lists dataset globs (path.Match: * does not cross /) that are
	// locked or unmounted on purpose: DatasetLocked, DatasetNotMounted and
	// KeyFileProblem skip them.
	Ignore []string `yaml:"ignore"`
}

// DatasetAge is one dataset glob and the age its newest snapshot may reach.
type DatasetAge struct {
	// Dataset is a glob (path.Match: * does not cross /); the first entry
	// that matches a dataset decides.
	Dataset string `yaml:"dataset"`
	// MaxAge: older is stale. 0 means the dataset is not checked.
	MaxAge Duration `yaml:"max_age"`
}

// SnapshotRules: snapshots that stopped, and snapshots that eat the pool.
type SnapshotRules struct {
	// MaxAge sets the newest snapshot's allowed age per dataset glob; a
	// dataset no entry matches is judged by its snapshot tool's period
	// (period × 2 + Grace), recognised from the names.
	MaxAge []DatasetAge `yaml:"max_age"`
	// Grace is added to twice the recognised period.
	Grace Duration `yaml:"grace"`
	// SpaceShare: snapshots holding more than this percentage of a pool's
	// used space warn, once the pool is past capacity.warning.
	SpaceShare float64 `yaml:"space_share"`
	// MaxCount: more snapshots than this on one dataset slow every zfs command.
	MaxCount int `yaml:"max_count"`
}

// ReplicationRules: backup targets that stopped receiving.
type ReplicationRules struct {
	// Targets are the datasets snapshots are received into (globs), each
	// with the age its newest snapshot may reach.
	Targets []DatasetAge `yaml:"targets"`
}

// PoolRules: pools that are not imported.
type PoolRules struct {
	// Exported lists pool globs that are exported on purpose (a backup
	// pool rotated off-site): their absence is not PoolMissing.
	Exported []string `yaml:"exported"`
}

// RedundancyRules: when a lost device margin becomes critical.
type RedundancyRules struct {
	// CriticalMargin: a top-level vdev that survives this many more device
	// failures or fewer is critical; with more, but less than designed, warning.
	CriticalMargin int `yaml:"critical_margin"`
}

// ErrorRules govern READ/WRITE/CKSUM counters.
type ErrorRules struct {
	// Hold keeps a "new errors" alert firing this long after the last increase.
	Hold Duration `yaml:"hold"`
	// RateCount errors within RateWindow on one vdev is critical, as ZED's
	// diagnosis engine would fault the device (its default: 10 in 10 minutes).
	RateCount  int      `yaml:"rate_count"`
	RateWindow Duration `yaml:"rate_window"`
}

// CapacityRules: pool fullness, dataset quotas and the fill forecast.
type CapacityRules struct {
	Warning  float64 `yaml:"warning"`
	Critical float64 `yaml:"critical"`
	// Hysteresis (percentage points): a level clears only below its threshold minus this.
	Hysteresis    float64 `yaml:"hysteresis"`
	QuotaWarning  float64 `yaml:"quota_warning"`
	QuotaCritical float64 `yaml:"quota_critical"`
	// ForecastWindow is the history a linear fit uses; ForecastMinSpan the
	// least history before a forecast is believed.
	ForecastWindow  Duration `yaml:"forecast_window"`
	ForecastMinSpan Duration `yaml:"forecast_min_span"`
	// ForecastWarning / ForecastCritical: "full within" horizons; 0 turns one off.
	ForecastWarning  Duration `yaml:"forecast_warning"`
	ForecastCritical Duration `yaml:"forecast_critical"`
}

// ScrubRules: how stale and how stuck a scrub may get.
type ScrubRules struct {
	MaxAge    Duration `yaml:"max_age"`
	PausedMax Duration `yaml:"paused_max"`
}

// SmartRules: SMART thresholds. Attribute limits are raw values; 0 turns a
// level off. Defaults follow Backblaze's drive statistics: any non-zero raw
// value of 5, 187, 188, 197 or 198 multiplies the failure rate.
type SmartRules struct {
	Reallocated       AttrLimits `yaml:"reallocated"`           // 5
	ReportedUncorrect AttrLimits `yaml:"reported_uncorrect"`    // 187
	CommandTimeout    AttrLimits `yaml:"command_timeout"`       // 188
	Pending           AttrLimits `yaml:"pending"`               // 197
	OfflineUncorrect  AttrLimits `yaml:"offline_uncorrectable"` // 198
	// CRCWarning: UDMA CRC errors (199) at or above this warn about the
	// cable or USB enclosure.
	CRCWarning   uint64     `yaml:"crc_warning"`
	GrownDefects AttrLimits `yaml:"grown_defects"` // SCSI grown defect list
	MediaErrors  AttrLimits `yaml:"nvme_media_errors"`
	// Temperatures in °C, used where the drive reports no thresholds itself.
	HDDTempWarning  int `yaml:"hdd_temp_warning"`
	HDDTempCritical int `yaml:"hdd_temp_critical"`
	SSDTempWarning  int `yaml:"ssd_temp_warning"`
	SSDTempCritical int `yaml:"ssd_temp_critical"`
	// NVMeSpareWarning: available spare (%) at or below this warns; at or
	// below the drive's own threshold is critical.
	NVMeSpareWarning int `yaml:"nvme_spare_warning"`
	// NVMeUsedWarning: percentage_used (endurance consumed) at or above this warns.
	NVMeUsedWarning int `yaml:"nvme_used_warning"`
	// Overrides silence or re-threshold one attribute of one disk or model
	// whose vendor reports bogus values.
	Overrides []SmartOverride `yaml:"overrides"`
}

// AttrLimits are the raw-value levels of one counter attribute.
type AttrLimits struct {
	Warning  uint64 `yaml:"warning"`
	Critical uint64 `yaml:"critical"`
}

// SmartOverride applies to the disks matching Serial (exact) or Model (a
// glob such as "ST4000DM004*"). Attribute is an ATA id (5, 187, 188, 194 for
// temperature in °C, 197, 198, 199).
type SmartOverride struct {
	Serial    string  `yaml:"serial"`
	Model     string  `yaml:"model"`
	Attribute int     `yaml:"attribute"`
	Ignore    bool    `yaml:"ignore"`
	Warning   *uint64 `yaml:"warning"`
	Critical  *uint64 `yaml:"critical"`
}

// ARCRules: ARC memory pressure and, if wanted, its effectiveness.
type ARCRules struct {
	Throttle bool `yaml:"throttle"`
	// ThrottleHold keeps a throttling alert this long after the last throttle.
	ThrottleHold Duration `yaml:"throttle_hold"`
	// MinHitRatio (0..1) warns below it; 0 turns the rule off.
	MinHitRatio float64 `yaml:"min_hit_ratio"`
}

// WatcherRules: alerts about zwatch's own view of the machine.
type WatcherRules struct {
	// StaleIntervals: a collector silent for this many of its intervals is stale.
	StaleIntervals int `yaml:"stale_intervals"`
	// SilentAfter: a host whose heartbeat is this old is silent.
	SilentAfter Duration `yaml:"silent_after"`
	// TimeoutRepeats: this many timeouts in a row mean the command hangs.
	TimeoutRepeats int `yaml:"timeout_repeats"`
}

// validateSections checks the rules' sections that config still holds.
func (r *RulesConfig) validateSections(p string, errs *Errors) {
	if r.Redundancy.CriticalMargin < 0 || r.Redundancy.CriticalMargin > 2 {
		errs.add(p+".redundancy.critical_margin", r.Redundancy.CriticalMargin, "must be 0, 1 or 2")
	}
	positive(errs, p+".errors.hold", r.Errors.Hold, time.Minute)
	if r.Errors.RateCount < 1 {
		errs.add(p+".errors.rate_count", r.Errors.RateCount, "must be at least 1")
	}
	positive(errs, p+".errors.rate_window", r.Errors.RateWindow, time.Minute)
	positive(errs, p+".kernel.burst_gap", r.Kernel.BurstGap, time.Second)
	positive(errs, p+".kernel.window", r.Kernel.Window, time.Minute)
	positive(errs, p+".kernel.clear", r.Kernel.Clear, time.Minute)
	if r.Kernel.Bursts < 2 {
		errs.add(p+".kernel.bursts", r.Kernel.Bursts, "must be at least 2 (the first burst is the warning; this many within kernel.window are critical)")
	}
	if r.Kernel.BurstGap.D() >= r.Kernel.Window.D() {
		errs.add(p+".kernel.burst_gap", FormatDuration(r.Kernel.BurstGap.D()), "must be shorter than kernel.window (%s)", FormatDuration(r.Kernel.Window.D()))
	}
	if r.SlowIO.Rises < 1 {
		errs.add(p+".slow_io.rises", r.SlowIO.Rises, "must be at least 1")
	}
	positive(errs, p+".slow_io.window", r.SlowIO.Window, time.Minute)
	positive(errs, p+".slow_io.clear", r.SlowIO.Clear, time.Minute)
	for i, g := range r.Disks.Ignore {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" {
			errs.add(fmt.Sprintf("%s.disks.ignore[%d]", p, i), g, "want a serial or by-id glob such as WD-WX32* or usb-Seagate_*")
		}
	}

	c := r.Capacity
	percent(errs, p+".capacity.warning", c.Warning)
	percent(errs, p+".capacity.critical", c.Critical)
	if c.Warning >= c.Critical {
		errs.add(p+".capacity.warning", c.Warning, "must be below capacity.critical (%g)", c.Critical)
	}
	if c.Hysteresis < 0 || c.Hysteresis >= c.Warning {
		errs.add(p+".capacity.hysteresis", c.Hysteresis, "must be 0 or more and below capacity.warning")
	}
	percent(errs, p+".capacity.quota_warning", c.QuotaWarning)
	percent(errs, p+".capacity.quota_critical", c.QuotaCritical)
	if c.QuotaWarning >= c.QuotaCritical {
		errs.add(p+".capacity.quota_warning", c.QuotaWarning, "must be below capacity.quota_critical (%g)", c.QuotaCritical)
	}
	positive(errs, p+".capacity.forecast_window", c.ForecastWindow, time.Hour)
	positive(errs, p+".capacity.forecast_min_span", c.ForecastMinSpan, time.Minute)
	if c.ForecastMinSpan.D() > c.ForecastWindow.D() {
		errs.add(p+".capacity.forecast_min_span", FormatDuration(c.ForecastMinSpan.D()), "must not exceed capacity.forecast_window (%s)", FormatDuration(c.ForecastWindow.D()))
	}
	if c.ForecastWarning.D() < 0 || c.ForecastCritical.D() < 0 {
		errs.add(p+".capacity.forecast_warning", nil, "forecast horizons must not be negative")
	}
	if c.ForecastCritical.D() > 0 && c.ForecastWarning.D() > 0 && c.ForecastCritical.D() >= c.ForecastWarning.D() {
		errs.add(p+".capacity.forecast_critical", FormatDuration(c.ForecastCritical.D()), "must be shorter than capacity.forecast_warning (%s)", FormatDuration(c.ForecastWarning.D()))
	}

	positive(errs, p+".scrub.max_age", r.Scrub.MaxAge, time.Hour)
	positive(errs, p+".scrub.paused_max", r.Scrub.PausedMax, time.Minute)

	s := r.Smart
	for _, a := range []struct {
		key string
		l   AttrLimits
	}{{"reallocated", s.Reallocated}, {"reported_uncorrect", s.ReportedUncorrect}, {"command_timeout", s.CommandTimeout},
		{"pending", s.Pending}, {"offline_uncorrectable", s.OfflineUncorrect}, {"grown_defects", s.GrownDefects}, {"nvme_media_errors", s.MediaErrors}} {
		if a.l.Critical != 0 && a.l.Warning > a.l.Critical {
			errs.add(p+".smart."+a.key+".warning", a.l.Warning, "must not exceed %s.critical (%d)", a.key, a.l.Critical)
		}
	}
	temps := []struct {
		key  string
		w, c int
	}{{"hdd_temp", s.HDDTempWarning, s.HDDTempCritical}, {"ssd_temp", s.SSDTempWarning, s.SSDTempCritical}}
	for _, t := range temps {
		if t.w < 20 || t.w > 100 {
			errs.add(p+".smart."+t.key+"_warning", t.w, "must be 20 to 100 (°C)")
		}
		if t.c <= t.w || t.c > 120 {
			errs.add(p+".smart."+t.key+"_critical", t.c, "must be above %s_warning (%d) and at most 120 (°C)", t.key, t.w)
		}
	}
	if s.NVMeSpareWarning < 0 || s.NVMeSpareWarning > 100 {
		errs.add(p+".smart.nvme_spare_warning", s.NVMeSpareWarning, "must be 0 to 100 (%%)")
	}
	if s.NVMeUsedWarning < 1 || s.NVMeUsedWarning > 255 {
		errs.add(p+".smart.nvme_used_warning", s.NVMeUsedWarning, "must be 1 to 255 (%% of rated endurance)")
	}
	for i, o := range s.Overrides {
		op := fmt.Sprintf("%s.smart.overrides[%d]", p, i)
		if (o.Serial == "") == (o.Model == "") {
			errs.add(op, nil, "set exactly one of serial or model")
		}
		if o.Model != "" {
			if _, err := path.Match(o.Model, ""); err != nil {
				errs.add(op+".model", o.Model, "not a valid glob: %v", err)
			}
		}
		switch o.Attribute {
		case 5, 187, 188, 194, 197, 198, 199:
		default:
			errs.add(op+".attribute", o.Attribute, "must be one of 5, 187, 188, 194 (temperature), 197, 198, 199")
		}
		if o.Ignore == (o.Warning != nil || o.Critical != nil) {
			errs.add(op, nil, "set either ignore: true or warning/critical thresholds")
		}
		if o.Warning != nil && o.Critical != nil && *o.Warning > *o.Critical {
			errs.add(op+".warning", *o.Warning, "must not exceed critical (%d)", *o.Critical)
		}
	}

	positive(errs, p+".arc.throttle_hold", r.ARC.ThrottleHold, time.Minute)
	if r.ARC.MinHitRatio < 0 || r.ARC.MinHitRatio >= 1 {
		errs.add(p+".arc.min_hit_ratio", r.ARC.MinHitRatio, "must be 0 (off) or a ratio below 1, such as 0.8")
	}
	if r.Watcher.StaleIntervals < 2 || r.Watcher.StaleIntervals > 100 {
		errs.add(p+".watcher.stale_intervals", r.Watcher.StaleIntervals, "must be 2 to 100")
	}
	positive(errs, p+".watcher.silent_after", r.Watcher.SilentAfter, 30*time.Second)
	if r.Watcher.TimeoutRepeats < 1 || r.Watcher.TimeoutRepeats > 100 {
		errs.add(p+".watcher.timeout_repeats", r.Watcher.TimeoutRepeats, "must be 1 to 100")
	}
	globs(errs, p+".datasets.ignore", r.Datasets.Ignore, "a dataset glob such as tank/scratch or backup/*")
	globs(errs, p+".pools.exported", r.Pools.Exported, "a pool glob such as offsite*")
	datasetAges(errs, p+".snapshots.max_age", r.Snapshots.MaxAge)
	datasetAges(errs, p+".replication.targets", r.Replication.Targets)
	if g := r.Snapshots.Grace.D(); g < 0 || g > 7*24*time.Hour {
		errs.add(p+".snapshots.grace", FormatDuration(g), "must be between 0s and 7d")
	}
	percent(errs, p+".snapshots.space_share", r.Snapshots.SpaceShare)
	if r.Snapshots.MaxCount < 1 {
		errs.add(p+".snapshots.max_count", r.Snapshots.MaxCount, "must be at least 1 (snapshots per dataset)")
	}
}

// globs checks a list of dataset or pool globs.
func globs(errs *Errors, p string, list []string, want string) {
	for i, g := range list {
		glob(errs, fmt.Sprintf("%s[%d]", p, i), g, want)
	}
}

func glob(errs *Errors, p, g, want string) {
	if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" || strings.HasPrefix(g, "/") {
		errs.add(p, g, "want %s (* does not cross /)", want)
	}
}

// datasetAges checks a glob → max age list.
func datasetAges(errs *Errors, p string, list []DatasetAge) {
	for i, a := range list {
		ep := fmt.Sprintf("%s[%d]", p, i)
		glob(errs, ep+".dataset", a.Dataset, "a dataset glob such as tank/photos or backup/*")
		if d := a.MaxAge.D(); d != 0 && d < time.Minute {
			errs.add(ep+".max_age", FormatDuration(d), "must be at least 1m, or 0 to leave the dataset unchecked")
		}
	}
}

func percent(errs *Errors, p string, v float64) {
	if v <= 0 || v > 100 {
		errs.add(p, v, "must be a percentage above 0 and at most 100")
	}
}
