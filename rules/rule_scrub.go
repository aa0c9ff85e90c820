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

// scrubSettings are rules.scrub: how stale and how stuck a scrub may get.
type scrubSettings struct {
	MaxAge    config.Duration `yaml:"max_age" doc:"last scrub older than this is a warning"`
	PausedMax config.Duration `yaml:"paused_max" doc:"a scrub paused longer than this is a warning"`
}

var scrubConfig = defineConfig("scrub", scrubSettings{MaxAge: config.Duration(35 * 24 * time.Hour), PausedMax: config.Duration(8 * time.Hour)})

func (s scrubSettings) validate(p string, errs *config.Errors) {
	config.CheckMinDuration(errs, p+".max_age", s.MaxAge, time.Hour)
	config.CheckMinDuration(errs, p+".paused_max", s.PausedMax, time.Minute)
}

func scrubRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus},
		Eval:  poolEval(ruleScrub),
		Config: []config.RuleSection{
			scrubConfig,
		},
		Alerts: []AlertInfo{{
			Name:      nameScrubNever,
			For:       24 * time.Hour,
			Severity:  "warning",
			Condition: "no scrub on record; `for` {for}",
		}, {
			Name:       nameScrubOverdue,
			Thresholds: scrubConfig.thresholds("max_age"),
			Severity:   "warning",
			Condition:  "last scrub ended more than `scrub.max_age` ({scrub.max_age}) ago (remembered across resilvers)",
		}, {
			Name:      nameScrubErrors,
			Severity:  "critical (unrepaired errors) / warning (repaired bytes)",
			Condition: "last finished scrub's result, kept while a resilver or the next scrub runs; a new scrub with errors is sent again",
		}, {
			Name:       nameScrubPaused,
			Thresholds: scrubConfig.thresholds("paused_max"),
			Severity:   "warning",
			Condition:  "paused longer than `scrub.paused_max` ({scrub.paused_max})",
		}},
		Memory: []memoryDef{scrubMemory},
	}
}

// scrubs is what the scrub rule remembers of a host: each pool's last
// finished scrub, which zpool status stops showing once a resilver ran.
type scrubs struct {
	Pools map[string]*scrubHistory `json:"pools,omitempty"`
}

// scrubMemory: version 0 is 41d2458's scrubs, the map alone.
var scrubMemory = remember("scrub", 1, intoField(func(m *scrubs) *map[string]*scrubHistory { return &m.Pools }))

type scrubHistory struct {
	LastEnd      *time.Time `json:"last_end,omitempty"`
	LastErrors   uint64     `json:"last_errors,omitempty"`
	LastRepaired uint64     `json:"last_repaired,omitempty"`
}

// last is the pool's last finished scrub; nil when none is known.
func (m *scrubs) last(pool string) *scrubHistory {
	if m == nil {
		return nil
	}
	return m.Pools[pool]
}

// nameScrub: scrubs are how ZFS finds silent corruption while the redundancy
// to repair it still exists. Four conditions:
//   - ScrubNever: no scrub on record (a new pool gets rules.for 24h of grace);
//   - ScrubOverdue: the last scrub ended longer ago than rules.scrub.max_age;
//   - ScrubErrors: the last scrub found errors it could not repair
//     (critical) or repaired bytes (warning: a disk returned bad data),
//     until a later scrub ends clean (see scrubFinding);
//   - ScrubPaused: paused longer than rules.scrub.paused_max.
//
// The last scrub's end is kept in the state, because after a resilver
// zpool status only shows the resilver.
func ruleScrub(c *evalCtx, p *zfs.Pool) {
	s := &p.Scan
	hist := scrubMemory.peek(c.h).last(p.Name)
	if s.Function == zfs.ScanScrub && s.State == zfs.ScanStateFinished && s.End != nil {
		if hist == nil || hist.LastEnd == nil || !hist.LastEnd.Equal(*s.End) {
			end := *s.End
			hist = &scrubHistory{LastEnd: &end, LastErrors: s.Errors, LastRepaired: s.RepairedBytes}
			mem := scrubMemory.of(c.h)
			if mem.Pools == nil {
				mem.Pools = map[string]*scrubHistory{}
			}
			mem.Pools[p.Name] = hist
			c.h.dirty = true
		}
	}
	labels := map[string]string{"pool": p.Name}
	scrubbing := s.Function == zfs.ScanScrub && (s.State == zfs.ScanStateScanning || s.State == zfs.ScanStatePaused)

	if (s.Function == "" || s.Function == zfs.ScanNone) && (hist == nil || hist.LastEnd == nil) {
		c.emit(cond{name: nameScrubNever, severity: alert.Warning, pool: p.Name, labels: labels,
			summary: fmt.Sprintf("pool %s has never been scrubbed", p.Name),
			desc:    fmt.Sprintf("Start one with `zpool scrub %s` and schedule it monthly (most distributions ship a timer).", p.Name)})
	}

	if hist != nil && hist.LastEnd != nil && !scrubbing {
		if age := c.now.Sub(*hist.LastEnd); age > scrubConfig.of(c.cfg).MaxAge.D() {
			days := int(age / (24 * time.Hour))
			c.emit(cond{name: nameScrubOverdue, severity: alert.Warning, pool: p.Name, labels: labels,
				summary:  fmt.Sprintf("pool %s was last scrubbed %d days ago", p.Name, days),
				desc:     fmt.Sprintf("The last scrub of %s ended %s; zwatch expects one at least every %s. Run `zpool scrub %s` and check the scrub timer.", p.Name, hist.LastEnd.UTC().Format(time.RFC3339), fmtDur(scrubConfig.of(c.cfg).MaxAge.D()), p.Name),
				evidence: map[string]string{"last_scrub_end": hist.LastEnd.UTC().Format(time.RFC3339)}})
		}
	}

	if f, ok := scrubFinding(s, hist); ok && (f.errors > 0 || f.repaired > 0) {
		var news uint64
		ev := map[string]string{"errors": itoa(f.errors), "repaired_bytes": itoa(f.repaired)}
		if f.end != nil {
			news = uint64(f.end.Unix())
			ev["scrub_end"] = f.end.UTC().Format(time.RFC3339)
		}
		if f.text != "" {
			ev["scan"] = oneLine(f.text)
		}
		if f.errors > 0 {
			c.emit(cond{name: nameScrubErrors, severity: alert.Critical, pool: p.Name, labels: labels, news: news,
				summary:  fmt.Sprintf("scrub of %s ended with %d error(s)", p.Name, f.errors),
				desc:     fmt.Sprintf("The last scrub of %s could not repair %d error(s): see `zpool status -v %s` for affected files and the devices' error counters.", p.Name, f.errors, p.Name),
				evidence: ev})
		} else {
			c.emit(cond{name: nameScrubErrors, severity: alert.Warning, pool: p.Name, labels: labels, news: news,
				summary:  fmt.Sprintf("scrub of %s repaired %s", p.Name, units.IEC(f.repaired)),
				desc:     fmt.Sprintf("The last scrub of %s found and repaired bad data: a device returned wrong blocks. Check which device's CKSUM counter rose and its SMART data.", p.Name),
				evidence: ev})
		}
	}

	if s.Function == zfs.ScanScrub && s.State == zfs.ScanStatePaused && s.PausedSince != nil {
		if d := c.now.Sub(*s.PausedSince); d > scrubConfig.of(c.cfg).PausedMax.D() {
			c.emit(cond{name: nameScrubPaused, severity: alert.Warning, pool: p.Name, labels: labels,
				summary: fmt.Sprintf("scrub of %s paused for %s", p.Name, fmtDur(d)),
				desc:    fmt.Sprintf("A paused scrub protects nothing. Resume it with `zpool scrub %s`.", p.Name)})
		}
	}
}

// finding is what the last finished scrub of a pool found.
type finding struct {
	errors, repaired uint64
	end              *time.Time
	text             string // the scan line, when it still shows that scrub
}

// scrubFinding is the result of the last finished scrub. zpool status
// shows only the newest scan, so once a resilver starts (a disk came back,
// `zpool replace`) or another scrub runs, the last scrub's result is the
// one remembered: the resilver repairs one device and proves nothing about
// the rest, so the finding stands until a later scrub completes clean. A
// pool whose scan line says "none requested" has no scrub of its own on
// record (a new pool under an old name): no finding.
func scrubFinding(s *zfs.Scan, hist *scrubHistory) (finding, bool) {
	if s.Function == zfs.ScanScrub && s.State == zfs.ScanStateFinished {
		return finding{errors: s.Errors, repaired: s.RepairedBytes, end: s.End, text: s.Text}, true
	}
	if s.Function == "" || s.Function == zfs.ScanNone || hist == nil || hist.LastEnd == nil {
		return finding{}, false
	}
	return finding{errors: hist.LastErrors, repaired: hist.LastRepaired, end: hist.LastEnd}, true
}

// fmtDur prints 3d, 8h0m0s — days when whole.
func fmtDur(d time.Duration) string {
	if d >= 24*time.Hour {
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
	if d < time.Minute {
		return d.Truncate(time.Second).String()
	}
	return d.Truncate(time.Minute).String()
}
