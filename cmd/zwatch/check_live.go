package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/rules"
)

// liveSources moves what a live check reads off this machine's fixed
// places, for tests; the zero value reads this machine.
type liveSources struct {
	kstatRoot string // the pool kstats; "" is collectors.KstatDir
}

// liveCollectors are the collectors of collectors.Table() a live check
// runs, in this order, with what each waits on, for the check's answer when
// it does not answer. The kstat comes first: it answers while zpool hangs
// on a SUSPENDED pool. Left out: zpool import (it reads every disk's
// labels, too heavy for a check run every few minutes), the ARC and the
// disk inventory (their rules judge changes between readings), and the
// followers (zpool events, the kernel log: streams, not readings).
func liveCollectors() []liveCollector {
	return []liveCollector{
		{"pool_kstat", "the pools' kstat"},
		{"zpool_status", "zpool status"},
		{"zpool_list", "zpool list"},
		{"datasets", "zfs list"},
		{"snapshots", "zfs list -t snapshot"},
		{"zfs_version", "zfs version"},
		{collectors.SmartCollectorName, "smartctl"},
	}
}

type liveCollector struct{ name, waits string }

// checkLive reads this host once through the daemon's own collectors and
// judges what they publish with the rules.
// limit is the check's bound, which a command cut short by it is said not
// to have answered within.
func checkLive(ctx context.Context, cfg *config.Config, o checkOptions, step *checkStep, limit time.Duration) pluginResult {
	if !cfg.ZFS.Enabled && !cfg.Smart.Enabled {
		return unknown("nothing to check: zfs.enabled and smart.enabled are both false in the config")
	}
	rd := readLive(ctx, cfg, o.live, step, limit)
	if rd.blocked != "" {
		return unknown("%s", rd.blocked)
	}
	now := o.clock()
	ev, err := rules.EvalFacts(cfg.Host, rd.pub.envs, cfg.Rules, now)
	if err != nil {
		return unknown("judge the readings: %v", err)
	}
	f, err := readFacts(ev.Facts)
	if err != nil {
		return unknown("%v", err)
	}
	r := verdict(ev.Alerts, f, cfg, now, healthText(f), rd.notes)
	if rd.hang == "" {
		return r
	}
	// A command that hung stopped the reading: only what the kernel said
	// meanwhile (a SUSPENDED pool) makes it more than UNKNOWN.
	if r.State == stateCritical {
		r.Text = r.Text + "; " + rd.hang
		return r
	}
	u := unknown("%s", rd.hang)
	u.Long, u.Perf = r.Long, r.Perf
	return u
}

// liveReading is what one pass over the collectors found.
type liveReading struct {
	pub   capturePublisher
	notes []string
	// hang says which command did not answer in time; the pass stops there.
	hang string
	// blocked says why nothing can be checked (zpool is not installed).
	blocked string
}

func readLive(ctx context.Context, cfg *config.Config, src liveSources, step *checkStep, limit time.Duration) liveReading {
	deadline, _ := ctx.Deadline()
	runnerTimeout := cfg.ZFS.CommandTimeout.D()
	if runnerTimeout <= 0 || runnerTimeout > limit {
		runnerTimeout = limit // the deadline cuts it short anyway
	}
	rd := liveReading{pub: capturePublisher{host: cfg.Host}}
	env := collectors.Env{Config: cfg, Runner: execx.New(runnerTimeout),
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Poke:   func(string) func() { return func() {} },
		Urgent: func(string) func(string) { return func(string) {} }}
	table := collectors.Table()
	for _, lc := range liveCollectors() {
		i := slices.IndexFunc(table, func(s collectors.Spec) bool { return s.Name == lc.name })
		if i < 0 || !runsHere(table[i], cfg) {
			continue
		}
		c := table[i].Poll(env)
		if k, ok := c.(*collectors.PoolKstat); ok && src.kstatRoot != "" {
			k.Root = src.kstatRoot
		}
		step.set(lc.waits)
		// What a command that does not answer had: its own timeout, or
		// what was left of the check's.
		allowed := runnerTimeout
		if time.Until(deadline) < runnerTimeout {
			allowed = limit
		}
		err := c.Collect(ctx, &rd.pub)
		switch {
		case err == nil || errors.Is(err, collectors.ErrNotAvailable):
		case hung(ctx, err):
			rd.hang = fmt.Sprintf("%s did not answer within %s", rd.pub.hungCommand(err, lc.waits), roundLimit(allowed))
			rd.pub.collectorError(lc.name, err)
			return rd
		case lc.name == "zpool_status" && execx.KindOf(err) == execx.KindMissing:
			rd.blocked = fmt.Sprintf("%s not found: %s, or set zfs.enabled: false", cfg.ZFS.Zpool, table[i].Family.Install)
			return rd
		case lc.name == "zpool_status":
			rd.blocked = fmt.Sprintf("zpool status: %v", err)
			return rd
		default:
			// As the daemon does: the error becomes a fact the rules judge
			// (a missing tool is a blind spot), and the check says it.
			rd.pub.collectorError(lc.name, err)
			rd.notes = append(rd.notes, fmt.Sprintf("NOTE: %s: %v", lc.waits, err))
		}
	}
	for _, ce := range rd.pub.smartErrors() {
		rd.notes = append(rd.notes, fmt.Sprintf("NOTE: smartctl %s: %s", ce.Target, ce.Message))
	}
	return rd
}

// runsHere is the daemon's decision (daemon.collectorComponents) for one
// collector: its family and own switches are on and it runs on this OS.
func runsHere(s collectors.Spec, cfg *config.Config) bool {
	if s.Poll == nil || (s.Family.Enabled != nil && !s.Family.Enabled(cfg)) || (s.Enabled != nil && !s.Enabled(cfg)) {
		return false
	}
	return len(s.Platforms) == 0 || slices.Contains(s.Platforms, runtime.GOOS)
}

// hung tells a command that did not answer (killed at its timeout, or
// still stuck from before) from one that failed.
func hung(ctx context.Context, err error) bool {
	k := execx.KindOf(err)
	return k == execx.KindTimeout || k == execx.KindBusy || ctx.Err() != nil
}

// capturePublisher keeps what the collectors publish as the envelopes the
// daemon would put on the bus.
type capturePublisher struct {
	host string
	envs []bus.Envelope
}

func (p *capturePublisher) Publish(_ context.Context, kind, collector string, data any, _ ...string) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s: %w", kind, err)
	}
	p.envs = append(p.envs, bus.Envelope{Schema: bus.Schema(kind), Host: p.host, Collector: collector, CollectedAt: time.Now().UTC(), Data: raw})
	return nil
}

// collectorError publishes a collector's failure as the daemon's loop does
// (collectors.Loop).
func (p *capturePublisher) collectorError(name string, err error) {
	_ = collectors.Publish(context.Background(), p, facts.CollectorError, name, collectors.ErrorFor(name, "", err))
}

// smartErrors are the disks smartctl could not read.
func (p *capturePublisher) smartErrors() []facts.CollectorErrorData {
	var out []facts.CollectorErrorData
	for _, env := range p.envs {
		var ce facts.CollectorErrorData
		if env.Schema == facts.CollectorError.Schema() && env.Collector == collectors.SmartCollectorName &&
			json.Unmarshal(env.Data, &ce) == nil && ce.Target != "" {
			out = append(out, ce)
		}
	}
	return out
}

// hungCommand names the command that did not answer: zpool status, or
// smartctl with the disk it was reading.
func (p *capturePublisher) hungCommand(err error, fallback string) string {
	var ee *execx.Error
	if !errors.As(err, &ee) {
		// A collector that handles its commands' errors itself (smartctl,
		// per disk) published the one cut short last.
		for i := len(p.envs) - 1; i >= 0; i-- {
			var ce facts.CollectorErrorData
			if env := p.envs[i]; env.Schema == facts.CollectorError.Schema() && json.Unmarshal(env.Data, &ce) == nil && ce.Kind == execx.KindTimeout {
				return shortCommand(ce.Command, fallback)
			}
		}
		return fallback
	}
	return shortCommand(ee.Command, fallback)
}

// shortCommand is "zpool status" of "/sbin/zpool status -j --json-int -p
// -P", and the tool with its operand otherwise ("smartctl /dev/sdc").
func shortCommand(argv, fallback string) string {
	f := strings.Fields(argv)
	if len(f) < 2 {
		return fallback
	}
	tool := filepath.Base(f[0])
	if tool == "zpool" || tool == "zfs" {
		return tool + " " + f[1]
	}
	return tool + " " + f[len(f)-1]
}
