package metrics

import (
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// viewCollector turns one scrape's snapshot into metrics. It describes
// nothing up front (an unchecked collector): which series exist depends on
// the pools, disks and channels the bus holds now.
type viewCollector struct {
	d    *descs
	snap snapshot
	log  *slog.Logger
}

func (c *viewCollector) Describe(chan<- *prometheus.Desc) {}

func (c *viewCollector) Collect(ch chan<- prometheus.Metric) {
	e := &emitter{ch: ch, seen: map[*prometheus.Desc]map[string]struct{}{}}
	d, s := c.d, c.snap
	e.gauge(d.scrapeError, boolf(s.hostsErr != nil), "hosts")
	e.gauge(d.scrapeError, boolf(s.outboxErr != nil), "outbox")
	e.gauge(d.scrapeDuration, s.took.Seconds())
	if s.hostsErr == nil {
		for i := range s.hosts {
			c.host(e, &s.hosts[i])
		}
	}
	if s.outboxErr == nil {
		for _, p := range s.outbox {
			e.gauge(d.outboxBacklog, float64(p.Backlog), s.local, p.Channel, p.Type)
			e.gauge(d.outboxDead, float64(p.DeadLetters), s.local, p.Channel, p.Type)
			e.gauge(d.outboxAckFloor, float64(p.AckFloor), s.local, p.Channel, p.Type)
		}
	}
	if e.dropped > 0 {
		c.log.Warn("metrics: series left out of this scrape", "duplicates_or_invalid", e.dropped, "first", e.firstErr)
	}
}

// emitter sends const metrics, dropping a second series with the same
// labels (two vdevs zpool prints with the same name) and any label value
// client_golang refuses, instead of failing the whole scrape.
type emitter struct {
	ch       chan<- prometheus.Metric
	seen     map[*prometheus.Desc]map[string]struct{}
	dropped  int
	firstErr string
}

func (e *emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.send(d, prometheus.GaugeValue, v, labels)
}

func (e *emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	e.send(d, prometheus.CounterValue, v, labels)
}

func (e *emitter) send(d *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) {
	key := strings.Join(labels, "\xff")
	seen := e.seen[d]
	if seen == nil {
		seen = map[string]struct{}{}
		e.seen[d] = seen
	}
	if _, dup := seen[key]; dup {
		e.drop("duplicate series " + d.String())
		return
	}
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		e.drop(err.Error())
		return
	}
	seen[key] = struct{}{}
	e.ch <- m
}

func (e *emitter) drop(why string) {
	if e.dropped == 0 {
		e.firstErr = why
	}
	e.dropped++
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
