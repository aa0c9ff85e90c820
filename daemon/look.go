package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/incident"
	"github.com/zwatch/zwatch/notifiers/delivery"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/metrics"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/web"
)

// lookComponents are what a person looks at: the history writer, and the
// status page with its JSON API and /metrics on http.listen. They run where
// the rule engine runs, whose server sees every host of a fleet.
func lookComponents(ctx context.Context, cfg *config.Config, b *bus.Bus, opts Options, ans *delivery.Answers, log *slog.Logger) []Component {
	var comps []Component
	var store *history.Store
	if cfg.History.Enabled {
		hc := cfg.History
		if b.Embedded() {
			// The store may have been shrunk to fit its filesystem.
			if per := int(b.Sizes(BusOptions(cfg)).History / history.StreamCount >> 20); per >= 1 && per < hc.MaxMB {
				log.Warn("history streams shrunk to fit the state filesystem", "history_max_mb", per, "wanted_mb", hc.MaxMB)
				hc.MaxMB = per
			}
		}
		var err error
		if store, err = history.Open(ctx, b.JS, hc, cfg.Bus.Replicas, log.With("part", "history")); err != nil {
			// Monitoring goes on without the plots; the page says history is off.
			log.Error("history is off: its streams cannot be created", "err", err)
			store = nil
		} else {
			comps = append(comps, Component{Name: "history", Run: store.Run})
		}
	}
	if cfg.HTTP.Listen == "" {
		log.Info("status page and /metrics are off (http.listen: \"\")")
		return comps
	}
	view := statusview.New(b, cfg)
	o := web.Options{
		Config:  cfg.HTTP,
		View:    view,
		Metrics: metrics.Handler(metrics.Options{View: view, Version: Version, Log: log.With("part", "metrics")}),
		Version: Version,
		Log:     log.With("part", "http"),
		Ready:   opts.HTTPReady,
	}
	if store != nil {
		o.History = store
	}
	if !b.Embedded() {
		o.Engine = func(ctx context.Context) (*fleet.EngineStatus, error) { return fleet.Status(ctx, b.JS) }
	}
	if ans != nil && cfg.HTTP.PublicURL != "" {
		o.Answers = &web.AnswerOptions{Key: ans.Key, Do: ans.Do, ErrUsed: incident.ErrLinkUsed,
			Use: func(ctx context.Context, nonce string, expires time.Time) error {
				return incident.UseLink(ctx, b, nonce, expires)
			},
			Used: func(ctx context.Context, nonce string) (bool, error) { return incident.LinkUsed(ctx, b, nonce) },
		}
		if cfg.Actions.Replace {
			o.Answers.ReplaceHost = cfg.Host
		}
	}
	comps = append(comps, Component{Name: "http", Run: func(ctx context.Context) error { return web.Serve(ctx, o) }})
	return comps
}
