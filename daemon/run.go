package daemon

import (
	"context"

	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	sddaemon "github.com/coreos/go-systemd/v22/daemon"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/execx"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/rules"
)

// Options are what `zwatch run` adds to the config.
type Options struct {
	// Notify overrides notifier options (the replacement guide).
	Notify notifiers.Options
}

// Run starts zwatch and blocks until ctx ends, then shuts down in order:
// collectors stop, in-flight rule evaluations and deliveries finish, the bus
// drains and the embedded JetStream closes its files.
func Run(ctx context.Context, cfg *config.Config, opts Options, log *slog.Logger) error {
	role := cfg.Role
	if role == "" {
		role = config.RoleAll
	}
	bo := BusOptions(cfg)
	var buf *fleet.Buffer
	if role == config.RoleAgent {
		// An agent only publishes: no stream management, and replies on its
		// own inbox prefix so its NATS permissions can be per host.
		bo.NoStreams, bo.InboxPrefix = true, "_INBOX_"+bus.Token(cfg.Host)
		bo.ReconnectHook = func() {
			if buf != nil {
				buf.Wake()
			}
		}
	}
	b, err := bus.Open(ctx, bo, log.With("part", "bus"))
	if err != nil {
		return err
	}
	defer b.Close()
	if b.Embedded() {
		log.Info("bus ready", "mode", "embedded", "state_dir", cfg.StateDir, "listen", b.ClientURL())
	} else {
		log.Info("bus ready", "mode", "external", "url", cfg.Bus.URL)
	}

	var pub collectors.Publisher = &collectors.BusPublisher{Bus: b, Host: cfg.Host}
	tr := newTracker()
	var comps []Component
	if role == config.RoleAgent {
		buf = fleet.NewBuffer(b, cfg.Host, cfg.Fleet.Buffer, log.With("part", "publisher"))
		pub = buf
		comps = append(comps, Component{Name: "publisher", Run: buf.Run})
	}
	if role != config.RoleServer {
		comps = append(comps, collectorComponents(cfg, pub, tr, log)...)
	}
	if role != config.RoleAgent {
		runRules := func(ctx context.Context) error {
			return rules.Run(ctx, b, cfg.Rules, log.With("part", "rules"))
		}
		if !b.Embedded() {
			// Several servers may share this bus: one rule engine at a time.
			inner := runRules
			runRules = func(ctx context.Context) error {
				holder := fmt.Sprintf("%s/%d", cfg.Host, os.Getpid())
				return fleet.Lead(ctx, b.JS, fleet.RulesLease, holder, cfg.Fleet.LeaseTTL.D(), cfg.Bus.Replicas, log.With("part", "lease"), inner)
			}
		}
		comps = append(comps,
			Component{Name: "rules", Run: runRules},
			Component{Name: "notifiers", Run: func(ctx context.Context) error {
				return notifiers.Run(ctx, b, cfg.Notify, opts.Notify, log.With("part", "notify"))
			}},
			Component{Name: "alerts-snapshot", Run: snapshotter(b, cfg.StateDir)},
		)
	}
	comps = append(comps,
		Component{Name: "heartbeat", Run: (&heartbeat{
			pub: pub, tracker: tr, started: time.Now(), every: 30 * time.Second,
			url: cfg.Heartbeat.URL, urlEvery: cfg.Heartbeat.Interval.D(),
			client: &http.Client{Timeout: 10 * time.Second}, log: log,
		}).run},
	)

	if sched, err := newMaintenance(cfg, pub, log.With("part", "maintenance")); err != nil {
		return err
	} else {
		comps = append(comps, Component{Name: "maintenance", Run: sched.Run})
	}

	if ok, err := sddaemon.SdNotify(false, sddaemon.SdNotifyReady); err != nil {
		log.Warn("systemd notify failed", "err", err)
	} else if ok {
		log.Debug("told systemd we are ready")
	}
	log.Info("zwatch running", "host", cfg.Host, "role", role, "version", Version)
	go func() {
		// Once start-up has touched what it touches, drop the binary's
		// pages the daemon does not use (see trimExecutableRSS).
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			trimExecutableRSS()
		}
	}()
	supervise(ctx, comps, log)
	_, _ = sddaemon.SdNotify(false, sddaemon.SdNotifyStopping)
	log.Info("zwatch stopped")
	return nil
}

// collectorComponents builds the collectors this machine can run. A missing
// tool disables its collectors with one clear log line and a heartbeat note,
// and everything else carries on.
func collectorComponents(cfg *config.Config, pub collectors.Publisher, tr *tracker, log *slog.Logger) []Component {
	runner := execx.New(cfg.ZFS.CommandTimeout.D())
	var comps []Component
	loop := func(c collectors.Collector, every time.Duration, trigger <-chan struct{}) Component {
		tr.register(c.Name(), every, "")
		return Component{Name: c.Name(), Run: func(ctx context.Context) error {
			collectors.Loop(ctx, tracked{Collector: c, t: tr}, pub, every, trigger, log.With("collector", c.Name()))
			return nil
		}}
	}

	switch {
	case !cfg.ZFS.Enabled:
		log.Info("ZFS monitoring is disabled by the config (zfs.enabled: false)")
	default:
		if _, err := execx.LookPath(cfg.ZFS.Zpool); err != nil {
			why := fmt.Sprintf("%s not found: install zfsutils-linux, or set zfs.zpool to its path", cfg.ZFS.Zpool)
			log.Warn("ZFS monitoring is disabled: " + why)
			// One blind spot, not four: every ZFS collector needs zpool.
			tr.register("zfs", 0, why)
			break
		}
		listPoke, statusPoke := make(chan struct{}, 1), make(chan struct{}, 1)
		comps = append(comps,
			loop(&collectors.ZpoolList{Runner: runner, Zpool: cfg.ZFS.Zpool, Zfs: cfg.ZFS.Zfs}, cfg.ZFS.ListInterval.D(), listPoke),
			loop(&collectors.ZpoolStatus{Runner: runner, Zpool: cfg.ZFS.Zpool, Log: log.With("collector", "zpool_status")}, cfg.ZFS.StatusInterval.D(), statusPoke),
			loop(&collectors.ARC{Runner: runner}, cfg.ZFS.ARCInterval.D(), nil),
		)
		if cfg.ZFS.FollowEvents {
			f := &collectors.EventFollower{Zpool: cfg.ZFS.Zpool, Debounce: 200 * time.Millisecond, Log: log.With("collector", "zpool_events"),
				// The status poll pages; the list poll can wait for the burst to end.
				Poke: func() { poke(statusPoke) }, Settled: func() { poke(listPoke) }}
			tr.register(f.Name(), 0, "")
			comps = append(comps, Component{Name: f.Name(), Run: func(ctx context.Context) error {
				err := f.Run(ctx, pub)
				tr.result(f.Name(), err, time.Now())
				return err
			}})
		}
	}

	if !cfg.Smart.Enabled {
		log.Info("SMART monitoring is disabled by the config (smart.enabled: false)")
	} else if _, err := execx.LookPath(cfg.Smart.Smartctl); err != nil {
		why := fmt.Sprintf("%s not found: install smartmontools, or set smart.smartctl to its path", cfg.Smart.Smartctl)
		log.Warn("SMART monitoring is disabled: " + why)
		tr.register("smart", 0, why)
	} else {
		comps = append(comps, loop(newSmartCollector(cfg), cfg.Smart.Interval.D(), nil))
	}
	return comps
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
