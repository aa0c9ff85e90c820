package rules

import (
	"fmt"
	"math"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

func fullForecastRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolCapacity},
		Eval:  poolCapacityEval(ruleFullForecast),
		Config: []config.RuleSection{
			capacityConfig,
		},
		Alerts: []AlertInfo{{
			Name:       namePoolFullForecast,
			For:        time.Hour,
			Thresholds: capacityConfig.thresholds("forecast_warning", "forecast_critical", "forecast_window", "forecast_min_span"),
			Severity:   "warning within `forecast_warning` ({capacity.forecast_warning}), critical within `forecast_critical` ({capacity.forecast_critical})",
			Condition: "least-squares line over `forecast_window` ({capacity.forecast_window}), needs `forecast_min_span` ({capacity.forecast_min_span}) and " +
				fmt.Sprint(forecastMinSamples) + " samples; `for` {for}",
		}},
		Memory: []memoryDef{forecastMemory},
	}
}

// capacityHistory is what PoolFullForecast remembers of a host: each
// pool's capacity samples (recordCapacity).
type capacityHistory struct {
	Pools map[string][]capSample `json:"pools,omitempty"`
}

// forecastMemory: version 0 is 41d2458's capacity, the map alone.
var forecastMemory = remember("forecast", 1, intoField(func(m *capacityHistory) *map[string][]capSample { return &m.Pools }))

// maxCapSamples bounds the samples kept of one pool.
const maxCapSamples = 96

type capSample struct {
	T int64   `json:"t"` // unix seconds
	P float64 `json:"p"` // capacity percent
}

// pools are the samples by pool; nil when there are none (m is nil).
func (m *capacityHistory) pools() map[string][]capSample {
	if m == nil {
		return nil
	}
	return m.Pools
}

// recordCapacity keeps a bounded capacity history per pool: at most one
// sample per window/64, none older than the window, at most maxCapSamples.
func recordCapacity(c *evalCtx, p *zfs.PoolList) {
	win := capacityConfig.of(c.cfg).ForecastWindow.D()
	mem := forecastMemory.of(c.h)
	if mem.Pools == nil {
		mem.Pools = map[string][]capSample{}
	}
	hist := mem.Pools[p.Name]
	now := c.now.Unix()
	step := int64(win / 64 / time.Second)
	if n := len(hist); n == 0 || now-hist[n-1].T >= step {
		hist = append(hist, capSample{T: now, P: p.CapacityPct})
		c.h.dirty = true
	}
	from := now - int64(win/time.Second)
	i := 0
	for i < len(hist) && hist[i].T < from {
		i++
	}
	if len(hist)-i > maxCapSamples {
		i = len(hist) - maxCapSamples
	}
	if i > 0 {
		hist = append([]capSample(nil), hist[i:]...)
	}
	mem.Pools[p.Name] = hist
}

// fit is a least-squares line through the samples plus the current point:
// slope in percent per second, and the time span the samples cover.
func fit(hist []capSample, now int64, cur float64) (slope float64, span time.Duration, n int) {
	var sx, sy, sxx, sxy float64
	add := func(t int64, p float64) {
		x := float64(t - now)
		sx += x
		sy += p
		sxx += x * x
		sxy += x * p
		n++
	}
	for _, s := range hist {
		if s.T != now {
			add(s.T, s.P)
		}
	}
	add(now, cur)
	if n < 2 {
		return 0, 0, n
	}
	den := float64(n)*sxx - sx*sx
	if den == 0 {
		return 0, 0, n
	}
	slope = (float64(n)*sxy - sx*sy) / den
	span = time.Duration(now-hist[0].T) * time.Second
	return slope, span, n
}

// forecastMinSamples: a line through fewer points predicts nothing.
const forecastMinSamples = 4

// nameFullForecast: "pool tank full in 9 days", from a linear regression of
// capacity over rules.capacity.forecast_window. It needs
// rules.capacity.forecast_min_span of history and at least four samples, so
// a single big copy right after start does not predict doom.
func ruleFullForecast(c *evalCtx, p *zfs.PoolList) {
	cfg := capacityConfig.of(c.cfg)
	if cfg.ForecastWarning.D() <= 0 && cfg.ForecastCritical.D() <= 0 {
		return
	}
	slope, span, n := fit(forecastMemory.peek(c.h).pools()[p.Name], c.now.Unix(), p.CapacityPct)
	if n < forecastMinSamples || span < cfg.ForecastMinSpan.D() || slope <= 0 || p.CapacityPct >= 100 {
		return
	}
	left := time.Duration(math.Min((100-p.CapacityPct)/slope, float64(math.MaxInt64/2/int64(time.Second)))) * time.Second
	var sev alert.Severity
	switch {
	case cfg.ForecastCritical.D() > 0 && left <= cfg.ForecastCritical.D():
		sev = alert.Critical
	case cfg.ForecastWarning.D() > 0 && left <= cfg.ForecastWarning.D():
		sev = alert.Warning
	default:
		return
	}
	perDay := slope * 86400
	days := left.Hours() / 24
	c.emit(cond{name: namePoolFullForecast, severity: sev, pool: p.Name,
		labels:  map[string]string{"pool": p.Name},
		summary: fmt.Sprintf("pool %s will be full in about %.0f days", p.Name, math.Ceil(days)),
		desc: fmt.Sprintf("Pool %s is %.0f%% full and grew %.2f points a day over the last %s (%d samples): at that rate it is full around %s.",
			p.Name, p.CapacityPct, perDay, fmtDur(span), n, c.now.Add(left).UTC().Format("2006-01-02")),
		evidence: map[string]string{"percent_per_day": fmt.Sprintf("%.3f", perDay), "days_left": fmt.Sprintf("%.1f", days)}})
}
