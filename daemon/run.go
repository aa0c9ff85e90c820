package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"runtime"
	"slices"
	"time"

	sddaemon "github.com/coreos/go-systemd/v22/daemon"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/rules/runner"
)

// Options are what `zwatch run` adds to the config.
type Options struct {
	// Notify overrides delivery options (the replacement guide).
	Notify delivery.Options
	// Collectors is the collector table; nil means collectors.Table().
	// Tests point a collector at fixtures (the kstat directory) through it.
	Collectors []collectors.Spec
	// HeartbeatEvery is how often the heartbeat (and its health canary)
	// goes out; default 30s, or half the systemd watchdog's interval.
	HeartbeatEvery time.Duration
	// HTTPReady, when set, is told the status page's address once it
	// listens (tests listen on port 0).
	HTTPReady func(net.Addr)
	// SystemRoot, when set, is where the start looks for ZED and smartd
	// notifying too (package neighbours): "/" for `zwatch run`, a fixture tree
	// in tests; "" skips the look (a simulation is not about this machine).
	SystemRoot string
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
	// This machine's commands (zwatch forget-pool) reach the embedded bus
	// on loopback, authenticated, even when it takes no agents.
	bo.LocalListen = true
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
	var path *delivery.Service
	var can *delivery.Canary
	var ans *delivery.Answers
	if role != config.RoleAgent {
		nopts := opts.Notify
		if !cfg.Rules.MarkTest {
			// A simulation's notifications are tests: its stand-in pools and
			// alerts must not become sensors next to the real ones.
			nopts.Inventory = notifiers.NewInventoryFeed()
			ans = answers(ctx, cfg, b, log)
			nopts.Answers = ans
			if ans != nil && cfg.Actions.Replace {
				nopts.ReplaceHost = cfg.Host
			}
			if ans != nil && cfg.HTTP.AnswerURL() != "" {
				nopts.Links = &delivery.Links{URL: cfg.HTTP.AnswerURL(), Key: ans.Key}
			}
		}
		if !b.Embedded() {
			// Servers sharing a cluster read each answering account once
			// (a Telegram bot refuses a second poller).
			nopts.Lease = fleet.Leaser(b.JS, leaseHolder(cfg), cfg.Fleet.LeaseTTL.D(), cfg.Bus.Replicas, log.With("part", "lease"))
		}
		if path, err = delivery.NewService(b, cfg.Notify, nopts, cfg.Host, cfg.StateDir, log); err != nil {
			return err
		}
		defer path.Close()
		can = path.Canary()
		pub = reportingPublisher{Publisher: pub, path: path}
	}
	if role == config.RoleAgent {
		buf = fleet.NewBuffer(b, cfg.Host, cfg.Fleet.Buffer, log.With("part", "publisher"))
		pub = buf
		comps = append(comps, Component{Name: "publisher", Run: buf.Run})
	}
	if role != config.RoleServer {
		table := opts.Collectors
		if table == nil {
			table = collectors.Table()
		}
		comps = append(comps, collectorComponents(cfg, table, pub, tr, log)...)
	}
	if role != config.RoleAgent {
		ropts := runner.Options{Delivery: path.Path(), Host: cfg.Host}
		if b.Embedded() {
			if err := path.CheckStreams(ctx); err != nil {
				log.Error("cannot check the state store for damage", "state_dir", cfg.StateDir, "err", err)
			}
		}
		runRules := func(ctx context.Context) error {
			return runner.RunWith(ctx, b, rulesConfig(cfg), ropts, log.With("part", "rules"))
		}
		if !b.Embedded() {
			runRules = fleetRules(b, cfg, ropts, log)
		}
		comps = append(comps,
			Component{Name: "rules", Run: runRules},
			Component{Name: "notifiers", Run: path.Run},
			Component{Name: "storage", Run: path.WatchStorage},
			Component{Name: "canary", Run: can.Sink},
			Component{Name: "alerts-snapshot", Run: snapshotter(b, cfg.StateDir)},
		)
		if feed := path.Inventory(); feed != nil {
			comps = append(comps, inventoryComponent(cfg, b, feed, log.With("part", "inventory")))
		}
		comps = append(comps, lookComponents(ctx, cfg, b, opts, ans, log)...)
	}
	every := opts.HeartbeatEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	comps = append(comps,
		Component{Name: "heartbeat", Run: (&heartbeat{
			pub: pub, tracker: tr, started: time.Now(), every: every, canary: can,
			url: cfg.Heartbeat.URL, urlEvery: cfg.Heartbeat.Interval.D(),
			client: &http.Client{Timeout: 10 * time.Second}, log: log,
		}).run},
	)

	if sched, err := newMaintenance(cfg, pub, log.With("part", "maintenance")); err != nil {
		return err
	} else {
		comps = append(comps, Component{Name: "maintenance", Run: sched.Run})
	}

	comps = append(comps, Component{Name: "settle", Run: newSettler(cfg.Memory.SettleAfter.D(), log.With("part", "memory")).run})

	if ok, err := sddaemon.SdNotify(false, sddaemon.SdNotifyReady); err != nil {
		log.Warn("systemd notify failed", "err", err)
	} else if ok {
		log.Debug("told systemd we are ready")
	}
	log.Info("zwatch running", "host", cfg.Host, "role", role, "version", Version)
	warnOtherNotifiers(cfg, opts.SystemRoot, log)
	supervise(ctx, comps, log)
	_, _ = sddaemon.SdNotify(false, sddaemon.SdNotifyStopping)
	log.Info("zwatch stopped")
	return nil
}

// collectorComponents builds the collectors of specs (collectors.Table())
// that this machine can run. A family switched off by the config is one log
// line; a missing tool disables its family with one warning and one
// heartbeat note, and everything else carries on.
func collectorComponents(cfg *config.Config, specs []collectors.Spec, pub collectors.Publisher, tr *tracker, log *slog.Logger) []Component {
	triggers := map[string]chan struct{}{}
	trigger := func(name string) chan struct{} {
		if triggers[name] == nil {
			triggers[name] = make(chan struct{}, 1)
		}
		return triggers[name]
	}
	urgent := urgentQueues{}
	env := collectors.Env{Config: cfg, Runner: execx.New(cfg.ZFS.CommandTimeout.D()),
		Poke: func(name string) func() {
			ch := trigger(name)
			return func() { poke(ch) }
		},
		Urgent: urgent.urgent}
	families := familyGate{cfg: cfg, tr: tr, log: log, allowed: map[string]bool{}}
	var comps []Component
	for _, s := range specs {
		if !families.allow(s.Family) || (s.Enabled != nil && !s.Enabled(cfg)) {
			continue
		}
		if len(s.Platforms) > 0 && !slices.Contains(s.Platforms, runtime.GOOS) {
			log.Info("collector does not run on this OS", "collector", s.Name, "os", runtime.GOOS)
			continue
		}
		e := env
		e.Log = log.With("collector", s.Name)
		switch {
		case s.Follow != nil:
			comps = append(comps, followComponent(s.Follow(e), pub, tr))
		case s.Poll != nil:
			c := s.Poll(e)
			comps = append(comps, pollComponent(c, s.Period(cfg), trigger(s.Name), pub, tr, e.Log))
			// Requests for a collector that does not run here (its
			// family is off, or it cannot read one target) are dropped.
			if tc, ok := c.(collectors.TargetCollector); ok {
				comps = append(comps, urgentComponent(urgent.queue(s.Name), tc, pub, e.Log))
			}
		}
	}
	return comps
}

// rulesConfig is what the rule engine runs with: the rules: section, and
// the part of notify: it applies itself (escalation's delays).
func rulesConfig(cfg *config.Config) config.RulesConfig {
	r := cfg.Rules
	r.Escalate = cfg.Notify.EscalationAfters()
	return r
}

// pollComponent runs c every interval, and at once when poked.
func pollComponent(c collectors.Collector, every time.Duration, trigger <-chan struct{}, pub collectors.Publisher, tr *tracker, log *slog.Logger) Component {
	tr.register(c.Name(), every, "")
	return Component{Name: c.Name(), Run: func(ctx context.Context) error {
		collectors.Loop(ctx, tracked{Collector: c, t: tr}, pub, every, trigger, log)
		return nil
	}}
}

// followComponent runs f until its stream ends; the supervisor restarts it.
func followComponent(f collectors.Follower, pub collectors.Publisher, tr *tracker) Component {
	tr.register(f.Name(), 0, "")
	if o, ok := f.(collectors.Opener); ok {
		o.OnOpen(func(at time.Time) { tr.result(f.Name(), nil, at) })
	}
	return Component{Name: f.Name(), Run: func(ctx context.Context) error {
		err := f.Run(ctx, pub)
		tr.result(f.Name(), err, time.Now())
		return err
	}}
}

// familyGate decides once per family whether its collectors run here, and
// says why not once: every collector of a family needs its switch and tool.
type familyGate struct {
	cfg     *config.Config
	tr      *tracker
	log     *slog.Logger
	allowed map[string]bool // by family name, once decided
}

func (g *familyGate) allow(f collectors.Family) bool {
	if f.Name == "" {
		return true
	}
	if ok, decided := g.allowed[f.Name]; decided {
		return ok
	}
	ok := g.decide(f)
	g.allowed[f.Name] = ok
	return ok
}

func (g *familyGate) decide(f collectors.Family) bool {
	if f.Enabled != nil && !f.Enabled(g.cfg) {
		g.log.Info(fmt.Sprintf("%s monitoring is disabled by the config (%s: false)", f.Name, f.Switch))
		return false
	}
	if f.Tool == nil {
		return true
	}
	tool := f.Tool(g.cfg)
	if _, err := execx.LookPath(tool); err != nil {
		why := fmt.Sprintf("%s not found: %s", tool, f.Install)
		g.log.Warn(f.Name + " monitoring is disabled: " + why)
		// One blind spot, not one per collector: they all need the tool.
		g.tr.register(f.BlindSpot, 0, why)
		return false
	}
	return true
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
