package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
)

// HostPrefix is put before the host name in everything a simulation sends.
// The rule engine builds notifications itself and offers no way to mark
// them alert.Notification.Test, so the host name is what tells a person
// that "simulated-nas1: pool vault is DEGRADED" is a rehearsal.
const HostPrefix = "simulated-"

// DefaultStepDelay is how long one recorded step lasts at speed 1.
const DefaultStepDelay = 4 * time.Second

// settle is how long a step lasts at least after the collectors read it:
// the rule engine looks for due notifications once a second, and the
// notification then has to reach the outbox.
const settle = 1500 * time.Millisecond

// Options control one simulation.
type Options struct {
	// Speed compresses the timeline: 10 runs it ten times faster. Each step
	// still lasts long enough for the rule engine to act on it, so very
	// high speeds stop making a difference. 0 means 1.
	Speed float64
	// StepDelay is one step's length at speed 1; 0 means DefaultStepDelay.
	StepDelay time.Duration
	// Daemon is passed to daemon.Run (the replacement guide).
	Daemon daemon.Options
	// Out receives the narration: what happens at each step.
	Out io.Writer
	// Log is the daemon's log; nil discards it. With notify.console on, the
	// notifications themselves are written to it.
	Log *slog.Logger
	// TempDir is where the temporary directory is made; "" = the system's.
	TempDir string
}

// Result is what a simulation did.
type Result struct {
	// Host is the name the notifications carry.
	Host string
	// WorkDir was the temporary directory; it is removed before Run returns.
	WorkDir string
	// Notifications are what the rule engine handed to the channels, in order.
	Notifications []alert.Notification
	// DeadLetters counts notifications a channel gave up on.
	DeadLetters int
}

// timing is one simulation's pacing.
type timing struct {
	step      time.Duration // a weight-1 step
	poll      time.Duration // collector interval
	groupWait time.Duration
}

func timingFor(o Options, userGroupWait time.Duration) timing {
	speed := o.Speed
	if speed <= 0 {
		speed = 1
	}
	base := o.StepDelay
	if base <= 0 {
		base = DefaultStepDelay
	}
	t := timing{step: time.Duration(float64(base) / speed)}
	t.poll = min(max(t.step/4, 100*time.Millisecond), time.Second)
	t.groupWait = min(userGroupWait, t.poll)
	return t
}

// replayed keeps the collectors of table (nil: collectors.Table()) whose
// tools the stand-ins replay. The others would read this machine (its
// kernel log, its disks, its pools' kstats) into the simulated host, or
// fail against the stand-ins and say so in the log.
func replayed(table []collectors.Spec) []collectors.Spec {
	if table == nil {
		table = collectors.Table()
	}
	var out []collectors.Spec
	for _, s := range table {
		switch s.Name {
		case "zpool_list", "zpool_status", collectors.SmartCollectorName:
			out = append(out, s)
		}
	}
	return out
}

// longHold: built-in pending durations (rules.AlertInfo.For) over it are
// kept, so that e.g. a never-scrubbed recorded pool does not page during a
// one-minute replay; shorter ones become 0.
const longHold = time.Hour

// simulationMuted are the alerts of the rules about the machine the
// simulation runs on, not about the recordings (rules.Rule.MachineLocal):
// ARC statistics are not recorded (the ARC collector reads this machine's,
// or finds none), and MonitoringBlindSpot would report that this machine
// has no ZFS kernel module.
func simulationMuted(catalogue []rules.Rule) []string {
	var out []string
	for _, r := range catalogue {
		if r.MachineLocal {
			for _, a := range r.Alerts {
				out = append(out, a.Name)
			}
		}
	}
	return out
}

// configure returns the config a simulation of sc runs with: the person's
// config (channels, thresholds, group_by, routes) with everything that
// could touch the real machine or the real monitoring replaced:
//
//   - host is prefixed with HostPrefix;
//   - the state directory is stateDir (temporary), the bus embedded and
//     unreachable from outside (bus.url, bus.listen ignored);
//   - zpool, zfs and smartctl are the stand-ins (absolute paths), SMART
//     reads only the recorded disks; ZFS or SMART monitoring is off when
//     the scenario has no recordings of it; zpool events are not followed;
//   - maintenance (scrubs, self-tests) and the heartbeat URL are off;
//   - the status page listens on a free loopback port of its own, never
//     on the person's http.listen (their zwatch may be serving it), and
//     carries no answer links;
//   - the rules about this machine rather than the recordings are off
//     (simulationMuted);
//   - the timeline is compressed: collectors poll every t.poll, group_wait
//     is at most t.poll, and pending holds of an hour or less are 0.
func configure(user config.Config, sc *Scenario, w *workDir, t timing) config.Config {
	c := user
	c.Host = HostPrefix + user.Host
	c.StateDir = w.stateDir
	c.Bus = config.BusConfig{Replicas: 1}
	c.Heartbeat.URL = ""
	c.HTTP = config.HTTPConfig{Listen: "127.0.0.1:0"}
	c.Maintenance.Scrub, c.Maintenance.ShortTest, c.Maintenance.LongTest = "", "", ""

	c.ZFS.Enabled = sc.UsesZFS()
	c.ZFS.Zpool, c.ZFS.Zfs = w.zpool, w.zfs
	c.ZFS.FollowEvents = false
	c.ZFS.ListInterval = config.Duration(t.poll)
	c.ZFS.StatusInterval = config.Duration(t.poll)
	c.ZFS.ARCInterval = config.Duration(24 * time.Hour)
	c.ZFS.CommandTimeout = config.Duration(max(user.ZFS.CommandTimeout.D(), 10*time.Second))

	c.Smart.Enabled = sc.UsesSmart()
	c.Smart.Smartctl = w.smartctl
	c.Smart.Interval = config.Duration(t.poll)
	c.Smart.Timeout = config.Duration(max(user.Smart.Timeout.D(), 10*time.Second))
	c.Smart.Devices = nil
	for _, d := range w.devices {
		c.Smart.Devices = append(c.Smart.Devices, config.SmartDevice{Device: d})
	}

	r := user.Rules
	r.GroupWait = config.Duration(t.groupWait)
	catalogue := rules.Catalogue()
	r.For = map[string]config.Duration{}
	for _, a := range rules.Alerts(catalogue) {
		d, set := user.Rules.For[a.Name]
		switch {
		case set && d.D() > longHold:
			r.For[a.Name] = d
		case !set && a.For > longHold:
		default:
			r.For[a.Name] = 0
		}
	}
	r.Disabled = append(append([]string(nil), user.Rules.Disabled...), simulationMuted(catalogue)...)
	r.MarkTest = true // every channel renders "this is a test"
	c.Rules = r
	return c
}

// Run replays sc through the real daemon with the person's config user,
// then stops it and removes every temporary file. It returns when the
// scenario has played out or ctx ends.
func Run(ctx context.Context, user config.Config, sc *Scenario, o Options) (*Result, error) {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, err := newWorkDir(o.TempDir, sc)
	if err != nil {
		return nil, err
	}
	defer w.remove()
	if err := w.canRun(); err != nil {
		return nil, err
	}
	t := timingFor(o, user.Rules.GroupWait.D())
	cfg := configure(user, sc, w, t)
	res := &Result{Host: cfg.Host, WorkDir: w.root}

	fmt.Fprintf(out, "Simulating %q as host %s: %s\n", sc.Name, cfg.Host, sc.Description)
	fmt.Fprintf(out, "Recordings: %s\n", sc.Origin)
	fmt.Fprintf(out, "No pool or disk of this machine is touched: stand-in zpool, zfs and smartctl replay the recordings from %s.\n", w.root)

	dctx, stop := context.WithCancel(ctx)
	defer stop()
	// finished is closed when daemon.Run returns: after stop(), or on its
	// own if it fails (the bus could not start).
	finished := make(chan struct{})
	var runErr error
	dopts := o.Daemon
	dopts.Collectors = replayed(dopts.Collectors)
	// The page's address is told between steps: out is not shared with
	// the daemon's goroutines.
	page := make(chan net.Addr, 1)
	ready := dopts.HTTPReady
	dopts.HTTPReady = func(a net.Addr) {
		select {
		case page <- a:
		default:
		}
		if ready != nil {
			ready(a)
		}
	}
	tellPage := func() {
		select {
		case a := <-page:
			fmt.Fprintf(out, "Its status page, while it runs: http://%s/\n", a)
		default:
		}
	}
	go func() {
		defer close(finished)
		runErr = daemon.Run(dctx, &cfg, dopts, log)
	}()
	shutdown := func() error {
		stop()
		select {
		case <-finished:
		case <-time.After(30 * time.Second):
			return errors.New("simulate: the daemon did not stop within 30s")
		}
		return runErr
	}
	early := func() error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if runErr != nil {
			return fmt.Errorf("simulate: %w", runErr)
		}
		return errors.New("simulate: the daemon stopped early: see the log")
	}
	abort := func(err error) (*Result, error) {
		_ = shutdown()
		return res, err
	}
	for i, st := range sc.Steps {
		if i > 0 {
			if err := w.setStep(i); err != nil {
				return abort(err)
			}
		}
		start := time.Now()
		say := st.Say
		if say == "" {
			say = st.ZFS
		}
		tellPage()
		fmt.Fprintf(out, "[%d/%d] %s\n", i+1, len(sc.Steps), say)
		if !w.waitServed(i, sc, 60*time.Second, finished) {
			if ctx.Err() != nil {
				return abort(ctx.Err())
			}
			select {
			case <-finished:
				return abort(early())
			default:
			}
			return abort(fmt.Errorf("simulate: the collectors did not read step %d within 60s: see the log", i+1))
		}
		weight := st.Weight
		if weight == 0 {
			weight = 1
		}
		hold := max(time.Duration(float64(t.step)*weight)-time.Since(start), t.groupWait+settle)
		select {
		case <-time.After(hold):
		case <-finished:
			return abort(early())
		case <-ctx.Done():
			return abort(ctx.Err())
		}
	}
	// Let the last notifications reach the channels; deliveries in flight
	// finish during the daemon's shutdown.
	select {
	case <-time.After(2 * time.Second):
	case <-finished:
		return abort(early())
	case <-ctx.Done():
		return abort(ctx.Err())
	}
	if err := shutdown(); err != nil {
		return res, err
	}
	if r, err := daemon.ReadSnapshot(w.stateDir); err == nil {
		for _, n := range r.Recent {
			if n.Host == cfg.Host {
				res.Notifications = append(res.Notifications, n)
			}
		}
		res.DeadLetters = len(r.DeadLetters)
	}
	return res, nil
}
