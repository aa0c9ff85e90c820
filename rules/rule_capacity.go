package rules

import (
	"fmt"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/units"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// capacitySettings are rules.capacity: pool fullness (PoolCapacity, and
// SnapshotSpace past its warning level), dataset quotas (DatasetQuota) and
// the fill forecast (PoolFullForecast).
type capacitySettings struct {
	Warning  float64 `yaml:"warning" doc:"pool capacity percent"`
	Critical float64 `yaml:"critical"`
	// Hysteresis (percentage points): a level clears only below its threshold minus this.
	Hysteresis    float64 `yaml:"hysteresis" doc:"percent below a threshold before it resolves (no flapping)"`
	QuotaWarning  float64 `yaml:"quota_warning" doc:"dataset use, percent of its quota/refquota"`
	QuotaCritical float64 `yaml:"quota_critical"`
	// ForecastWindow is the history a linear fit uses; ForecastMinSpan the
	// least history before a forecast is believed.
	ForecastWindow  config.Duration `yaml:"forecast_window" doc:"capacity history used for the \"full in N days\" forecast"`
	ForecastMinSpan config.Duration `yaml:"forecast_min_span"`
	// ForecastWarning / ForecastCritical: "full within" horizons; 0 turns one off.
	ForecastWarning  config.Duration `yaml:"forecast_warning"`
	ForecastCritical config.Duration `yaml:"forecast_critical"`
}

var capacityConfig = defineConfig("capacity", capacitySettings{
	Warning: 80, Critical: 90, Hysteresis: 3,
	QuotaWarning: 90, QuotaCritical: 98,
	ForecastWindow:   config.Duration(7 * 24 * time.Hour),
	ForecastMinSpan:  config.Duration(24 * time.Hour),
	ForecastWarning:  config.Duration(14 * 24 * time.Hour),
	ForecastCritical: config.Duration(3 * 24 * time.Hour),
})

func (c capacitySettings) validate(p string, errs *config.Errors) {
	percent(errs, p+".warning", c.Warning)
	percent(errs, p+".critical", c.Critical)
	if c.Warning >= c.Critical {
		errs.Add(p+".warning", c.Warning, "must be below capacity.critical (%g)", c.Critical)
	}
	if c.Hysteresis < 0 || c.Hysteresis >= c.Warning {
		errs.Add(p+".hysteresis", c.Hysteresis, "must be 0 or more and below capacity.warning")
	}
	percent(errs, p+".quota_warning", c.QuotaWarning)
	percent(errs, p+".quota_critical", c.QuotaCritical)
	if c.QuotaWarning >= c.QuotaCritical {
		errs.Add(p+".quota_warning", c.QuotaWarning, "must be below capacity.quota_critical (%g)", c.QuotaCritical)
	}
	config.CheckMinDuration(errs, p+".forecast_window", c.ForecastWindow, time.Hour)
	config.CheckMinDuration(errs, p+".forecast_min_span", c.ForecastMinSpan, time.Minute)
	if c.ForecastMinSpan.D() > c.ForecastWindow.D() {
		errs.Add(p+".forecast_min_span", config.FormatDuration(c.ForecastMinSpan.D()), "must not exceed capacity.forecast_window (%s)", config.FormatDuration(c.ForecastWindow.D()))
	}
	if c.ForecastWarning.D() < 0 || c.ForecastCritical.D() < 0 {
		errs.Add(p+".forecast_warning", nil, "forecast horizons must not be negative")
	}
	if c.ForecastCritical.D() > 0 && c.ForecastWarning.D() > 0 && c.ForecastCritical.D() >= c.ForecastWarning.D() {
		errs.Add(p+".forecast_critical", config.FormatDuration(c.ForecastCritical.D()), "must be shorter than capacity.forecast_warning (%s)", config.FormatDuration(c.ForecastWarning.D()))
	}
}

func poolCapacityRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolCapacity},
		Eval:  poolCapacityEval(rulePoolCapacity),
		Config: []config.RuleSection{
			capacityConfig,
		},
		Alerts: []AlertInfo{{
			Name:       namePoolCapacity,
			For:        5 * time.Minute,
			Thresholds: capacityConfig.thresholds("warning", "critical", "hysteresis"),
			Severity:   "warning ≥ `capacity.warning` ({capacity.warning}), critical ≥ `capacity.critical` ({capacity.critical})",
			Condition:  "a level holds until `capacity.hysteresis` ({capacity.hysteresis}) points below it; `for` {for}",
		}},
	}
}

// namePoolCapacity: pools slow down and fragment past 80 % and can wedge
// near 100 % (even deletes need space). Levels come from
// rules.capacity.warning/critical; a level, once reached, holds until the
// pool drops rules.capacity.hysteresis points below it, so a pool hovering
// at 80 % does not page every few minutes.
func rulePoolCapacity(c *evalCtx, p *zfs.PoolList) {
	cfg := capacityConfig.of(c.cfg)
	labels := map[string]string{"pool": p.Name}
	prev := c.previous(namePoolCapacity, labels)
	pct := p.CapacityPct
	var sev alert.Severity
	switch {
	case pct >= cfg.Critical:
		sev = alert.Critical
	case prev != nil && prev.A.Severity == alert.Critical && pct >= cfg.Critical-cfg.Hysteresis:
		sev = alert.Critical
	case pct >= cfg.Warning:
		sev = alert.Warning
	case prev != nil && pct >= cfg.Warning-cfg.Hysteresis:
		sev = alert.Warning
	default:
		return
	}
	ev := map[string]string{"capacity_percent": fmt.Sprintf("%.0f", pct)}
	if p.SizeBytes > 0 {
		ev["size_bytes"], ev["free_bytes"] = itoa(p.SizeBytes), itoa(p.FreeBytes)
	}
	c.emit(cond{name: namePoolCapacity, severity: sev, pool: p.Name, labels: labels,
		summary: fmt.Sprintf("pool %s is %.0f%% full", p.Name, pct),
		desc: fmt.Sprintf("Pool %s is %.0f%% full (%s free). ZFS slows down past 80%% and can wedge near 100%%; free space or add a vdev. Snapshots hold space: check `zfs list -t snapshot -o name,used -s used`.",
			p.Name, pct, units.IEC(p.FreeBytes)),
		evidence: ev})
}

// usableFullness is how full a pool is for its users. zpool list's CAP
// counts raw space — raidz parity, and the slop space ZFS keeps free (1/32
// of the pool, at least 128 MiB) — so a small pool that refuses writes can
// show 50 % (testdata/zpool-list/zfs-2.3.2-qemu-small-pool-full-at-slop.*);
// the root dataset's used/(used+avail) is what writes see. The larger of
// the two is taken.
func usableFullness(p *zfs.PoolList, datasets []zfs.Dataset) float64 {
	pct := p.CapacityPct
	for _, d := range datasets {
		if d.Name != p.Name || d.UsedBytes+d.AvailBytes == 0 {
			continue
		}
		if ds := 100 * float64(d.UsedBytes) / float64(d.UsedBytes+d.AvailBytes); ds > pct {
			pct = ds
		}
	}
	return pct
}
