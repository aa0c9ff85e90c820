package metrics

import (
	"sort"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/views/statusview"
)

func (c *viewCollector) host(e *emitter, h *statusview.Host) {
	d, host := c.d, h.Host
	e.gauge(d.hostInfo, 1, host, h.Version)
	if h.LastHeartbeat != nil {
		e.gauge(d.hostHeartbeat, unix(*h.LastHeartbeat), host)
	}
	e.gauge(d.hostSilent, boolf(h.Silent), host)
	for i := range h.Pools {
		c.pool(e, host, &h.Pools[i])
	}
	for i := range h.Disks {
		c.disk(e, host, &h.Disks[i])
	}
	c.arc(e, h)
	c.alerts(e, host, h.Alerts)
	c.collectors(e, h)
}

func (c *viewCollector) arc(e *emitter, h *statusview.Host) {
	a, d, host := h.ARC, c.d, h.Host
	if a == nil {
		return
	}
	e.gauge(d.arcSize, float64(a.SizeBytes), host)
	e.gauge(d.arcTarget, float64(a.TargetBytes), host)
	e.gauge(d.arcMin, float64(a.MinBytes), host)
	e.gauge(d.arcMax, float64(a.MaxBytes), host)
	e.gauge(d.arcL2Size, float64(a.L2SizeBytes), host)
	e.counter(d.arcHits, float64(a.Hits), host)
	e.counter(d.arcMisses, float64(a.Misses), host)
	e.counter(d.arcDemandDataHits, float64(a.DemandDataHits), host)
	e.counter(d.arcDemandDataMisses, float64(a.DemandDataMisses), host)
	e.counter(d.arcDemandMetaHits, float64(a.DemandMetadataHits), host)
	e.counter(d.arcDemandMetaMisses, float64(a.DemandMetadataMiss), host)
	e.counter(d.arcPrefetchHits, float64(a.PrefetchDataHits), host)
	e.counter(d.arcPrefMiss, float64(a.PrefetchDataMisses), host)
	e.counter(d.arcL2Hits, float64(a.L2Hits), host)
	e.counter(d.arcL2Misses, float64(a.L2Misses), host)
	e.counter(d.arcThrottle, float64(a.MemoryThrottleCount), host)
	if h.ARCAt != nil {
		e.gauge(d.arcAt, unix(*h.ARCAt), host)
	}
}

// alerts counts the host's alerts by name, severity and state; one rule may
// fire for several pools or disks at once.
func (c *viewCollector) alerts(e *emitter, host string, as []alert.Alert) {
	type key struct{ name, severity, state string }
	counts := map[key]int{}
	for _, a := range as {
		counts[key{a.Name, string(a.Severity), string(a.State)}]++
	}
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if a.severity != b.severity {
			return a.severity < b.severity
		}
		return a.state < b.state
	})
	for _, k := range keys {
		e.gauge(c.d.alerts, float64(counts[k]), host, k.name, k.severity, k.state)
		if k.state != string(alert.Firing) {
			continue
		}
		n := 0
		for _, a := range as {
			if a.Ack != nil && a.State == alert.Firing && a.Name == k.name && string(a.Severity) == k.severity {
				n++
			}
		}
		if n > 0 {
			e.gauge(c.d.alertsAcked, float64(n), host, k.name, k.severity)
		}
	}
}

func (c *viewCollector) collectors(e *emitter, h *statusview.Host) {
	d, host := c.d, h.Host
	names := make([]string, 0, len(h.Collectors))
	for n := range h.Collectors {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ch := h.Collectors[n]
		e.gauge(d.collInterval, ch.Interval.Seconds(), host, n)
		if ch.LastOK != nil {
			e.gauge(d.collLastOK, unix(*ch.LastOK), host, n)
		}
		disabled := ch.Disabled != ""
		// A follower (no interval) records a result only when its stream
		// ends, so while it runs without error it is up.
		up := !disabled && ch.LastError == "" && (ch.LastOK != nil || ch.Interval == 0)
		e.gauge(d.collUp, boolf(up), host, n)
		e.gauge(d.collDisabled, boolf(disabled), host, n)
		if ch.LastDuration > 0 {
			e.gauge(d.collDuration, ch.LastDuration.Seconds(), host, n)
		}
		e.counter(d.collRuns, float64(ch.Runs), host, n)
		e.counter(d.collErrors, float64(ch.Errors), host, n)
	}
}
