// Package metrics serves zwatch's view of its hosts as Prometheus metrics:
// pools and vdevs named as zfs_exporter and node_exporter name them, SMART in
// smartctl_exporter's shape, ARC, alerts, the outbox and the collectors'
// health. Nothing is kept between scrapes: each one reads the bus through
// the status view, bounded by a timeout.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zwatch/zwatch/views/statusview"
)

// View is what a scrape reads; *statusview.Reader is one.
type View interface {
	All(ctx context.Context) ([]statusview.Host, error)
	Outbox(ctx context.Context) ([]statusview.ChannelProgress, error)
	LocalHost() string
}

// DefaultTimeout bounds one scrape's reads of the bus when the scraper
// sends no X-Prometheus-Scrape-Timeout-Seconds (Prometheus' default is 10 s).
const DefaultTimeout = 8 * time.Second

// maxConcurrentScrapes: more scrapers at once than this get 503, so a
// misconfigured fleet of scrapers cannot pile reads onto the bus.
const maxConcurrentScrapes = 4

// Options configure Handler.
type Options struct {
	View    View
	Version string
	Log     *slog.Logger
	// Timeout bounds a scrape's reads; 0 means DefaultTimeout. A scraper's
	// own, shorter timeout header wins.
	Timeout time.Duration
}

type handler struct {
	view    View
	log     *slog.Logger
	timeout time.Duration
	descs   *descs
	static  *prometheus.Registry
	slots   chan struct{}
}

// Handler serves /metrics. Each scrape reads the view once; a part that
// cannot be read is left out and flagged by zwatch_scrape_error, never
// answered with a 500 or a half-filled metric.
func Handler(o Options) http.Handler {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	static := prometheus.NewRegistry()
	static.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "zwatch_build_info",
			Help:        "zwatch's version and the Go version it was built with; always 1.",
			ConstLabels: prometheus.Labels{"version": o.Version, "goversion": runtime.Version()},
		}, func() float64 { return 1 }),
	)
	return &handler{view: o.View, log: o.Log, timeout: o.Timeout, descs: newDescs(), static: static,
		slots: make(chan struct{}, maxConcurrentScrapes)}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		http.Error(w, "too many concurrent scrapes of /metrics; scrape less often or from fewer places", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), scrapeTimeout(r, h.timeout))
	defer cancel()
	snap := h.read(ctx)
	perScrape := prometheus.NewRegistry()
	if err := perScrape.Register(&viewCollector{d: h.descs, snap: snap, log: h.log}); err != nil {
		h.log.Error("metrics: registering the view collector", "err", err)
	}
	promhttp.HandlerFor(prometheus.Gatherers{h.static, perScrape}, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	}).ServeHTTP(w, r)
}

// scrapeTimeout is the shorter of ours and the scraper's own, less a
// margin so the answer arrives before the scraper gives up.
func scrapeTimeout(r *http.Request, ours time.Duration) time.Duration {
	v := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds")
	if v == "" {
		return ours
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || s <= 0 {
		return ours
	}
	theirs := time.Duration(s*float64(time.Second)) - 500*time.Millisecond
	if theirs < 500*time.Millisecond {
		theirs = 500 * time.Millisecond
	}
	return min(ours, theirs)
}

// snapshot is what one scrape read.
type snapshot struct {
	local     string
	hosts     []statusview.Host
	hostsErr  error
	outbox    []statusview.ChannelProgress
	outboxErr error
	took      time.Duration
}

func (h *handler) read(ctx context.Context) snapshot {
	start := time.Now()
	s := snapshot{local: h.view.LocalHost()}
	s.hosts, s.hostsErr = h.view.All(ctx)
	if s.hostsErr != nil {
		h.log.Warn("metrics: reading the hosts' view from the bus failed; host metrics left out of this scrape", "err", s.hostsErr)
	}
	s.outbox, s.outboxErr = h.view.Outbox(ctx)
	if s.outboxErr != nil {
		h.log.Warn("metrics: reading the outbox from the bus failed; outbox metrics left out of this scrape", "err", s.outboxErr)
	}
	s.took = time.Since(start)
	return s
}
