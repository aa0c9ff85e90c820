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

// arcSettings are rules.arc: ARC memory pressure and, if wanted, its
// effectiveness.
type arcSettings struct {
	Throttle bool `yaml:"throttle" doc:"alert on ARC memory throttling"`
	// ThrottleHold keeps a throttling alert this long after the last throttle.
	ThrottleHold config.Duration `yaml:"throttle_hold"`
	// MinHitRatio (0..1) warns below it; 0 turns the rule off.
	MinHitRatio float64 `yaml:"min_hit_ratio" doc:"e.g. 0.8 to alert on a low hit ratio; 0 turns it off"`
}

var arcConfig = defineConfig("arc", arcSettings{Throttle: true, ThrottleHold: config.Duration(time.Hour)})

func (a arcSettings) validate(p string, errs *config.Errors) {
	config.CheckMinDuration(errs, p+".throttle_hold", a.ThrottleHold, time.Minute)
	if a.MinHitRatio < 0 || a.MinHitRatio >= 1 {
		errs.Add(p+".min_hit_ratio", a.MinHitRatio, "must be 0 (off) or a ratio below 1, such as 0.8")
	}
}

func arcThrottleRule() Rule {
	return Rule{
		Reads:        []facts.Kind{facts.ARC},
		Eval:         arcEval(ruleARCThrottle),
		MachineLocal: true,
		Config: []config.RuleSection{
			arcConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameARCThrottle,
			Thresholds: arcConfig.thresholds("throttle", "throttle_hold"),
			Severity:   "warning",
			Condition:  "memory_throttle_count rose; holds `arc.throttle_hold` ({arc.throttle_hold})",
		}},
		Memory: []memoryDef{arcThrottleMemory},
	}
}

func arcHitRatioRule() Rule {
	return Rule{
		Reads:        []facts.Kind{facts.ARC},
		Eval:         arcEval(ruleARCHitRatio),
		MachineLocal: true,
		Config: []config.RuleSection{
			arcConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameARCHitRatio,
			For:        30 * time.Minute,
			Thresholds: arcConfig.thresholds("min_hit_ratio"),
			Severity:   "warning",
			Condition:  "hit ratio below `arc.min_hit_ratio` (0 = off); `for` {for}",
		}},
	}
}

// arcThrottle is what ARCThrottle remembers of a host: when the ARC last
// throttled (ThrottleDelta > 0).
type arcThrottle struct {
	At time.Time `json:"at"`
}

// arcThrottleMemory: version 0 is 41d2458's arc_throttle_at, the time alone.
var arcThrottleMemory = remember("arc_throttle", 1, intoField(func(m *arcThrottle) *time.Time { return &m.At }))

// throttledAt is when the ARC last throttled; nil when never (m is nil).
func (m *arcThrottle) throttledAt() *time.Time {
	if m == nil || m.At.IsZero() {
		return nil
	}
	return &m.At
}

// nameARCThrottle: memory_throttle_count rose — the ARC could not free
// memory fast enough and ZFS throttled writes. The alert holds for
// rules.arc.throttle_hold after the last throttle (readings come every
// minute; a flapping alert would help nobody).
func ruleARCThrottle(c *evalCtx, a *zfs.ARC) {
	if a != nil && a.ThrottleDelta > 0 {
		arcThrottleMemory.of(c.h).At = c.now
		c.h.dirty = true
	}
	at, cfg := arcThrottleMemory.peek(c.h).throttledAt(), arcConfig.of(c.cfg)
	if !cfg.Throttle || at == nil || c.now.Sub(*at) >= cfg.ThrottleHold.D() {
		return
	}
	c.emit(cond{name: nameARCThrottle, severity: alert.Warning,
		labels:   map[string]string{},
		summary:  "ZFS is throttling writes: the ARC is short of memory",
		desc:     "arcstats memory_throttle_count rose: the system runs low on memory and ZFS slows writes. Check what uses memory, or cap zfs_arc_max below what applications need.",
		evidence: map[string]string{"last_throttle": at.UTC().Format("2006-01-02T15:04:05Z")}})
}

// nameARCHitRatio: optional (rules.arc.min_hit_ratio). A low hit ratio is a
// performance finding, not a data risk: warning, after a long `for`. Between
// readings (a nil a) the last reading's condition stands.
func ruleARCHitRatio(c *evalCtx, a *zfs.ARC) {
	if a == nil {
		for _, t := range c.h.Alerts {
			if t.Scope == scopeARC && t.A.Name == nameARCHitRatio && t.A.State != alert.Resolved {
				c.out = append(c.out, cond{name: t.A.Name, severity: t.A.Severity, labels: t.A.Labels, summary: t.A.Summary, desc: t.A.Description, evidence: t.A.Evidence})
			}
		}
		return
	}
	min := arcConfig.of(c.cfg).MinHitRatio
	if min <= 0 || a.HitRatio == nil || *a.HitRatio >= min {
		return
	}
	c.emit(cond{name: nameARCHitRatio, severity: alert.Warning,
		labels:   map[string]string{},
		summary:  fmt.Sprintf("ARC hit ratio %.0f%% is below %.0f%%", *a.HitRatio*100, min*100),
		desc:     fmt.Sprintf("Only %.0f%% of reads were served from the ARC (size %s of target %s). More RAM or an L2ARC may help.", *a.HitRatio*100, units.IEC(a.SizeBytes), units.IEC(a.TargetBytes)),
		evidence: map[string]string{"hit_ratio": fmt.Sprintf("%.3f", *a.HitRatio)}})
}
