// Package rules is zwatch's rule engine: it turns collector facts from the
// bus into alerts in the manner of Prometheus and Alertmanager. Rules report
// the conditions that hold now; the engine hands them to its alert pipeline
// (package rules/pipeline), which gives each one a lifecycle (pending →
// firing → resolved), groups alerts into notifications, inhibits alerts
// that a bigger one already carries, applies silences and repeats what is
// still firing; the engine remembers all of it in the bus's key-value store
// across restarts.
//
// The core (Engine) is pure: facts and a clock go in, notifications come
// out. It saves and loads its own state (store.go, state_codec.go: the
// encoding of its per-host state); package rules/runner wires it to NATS
// JetStream: the consumers on the facts stream, batches and
// acknowledgement, partitions, the silence feed, delivery.
package rules

import (
	"fmt"
	"hash/maphash"
	"log/slog"
	"sort"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules/pipeline"
)

// Scopes: the set of conditions one kind of fact decides. Conditions of a
// scope that a new fact no longer reports are resolved.
const (
	scopeStatus    = "status"
	scopeCapacity  = "capacity"
	scopeARC       = "arc"
	scopeWatcher   = "watcher"
	scopeCorrelate = "correlate"
	scopeDatasets  = "datasets"
	scopeSnapshots = "snapshots"
	scopePools     = "pools"
	scopeSmart     = "smart/" // + serial
	scopeKernel    = "kernel"
)

// reevalEvery bounds how often Tick re-runs the time-based rules of a host.
const reevalEvery = 15 * time.Second

// Engine evaluates facts into alerts and notifications. It is not safe for
// concurrent use; its runner (package rules/runner) serialises access.
type Engine struct {
	cfg      config.RulesConfig
	hosts    map[string]*hostState
	disabled map[string]bool
	// owns, on a partitioned stream, says which hosts' states (by subject
	// token) are this engine's to load; nil: all.
	owns func(hostToken string) bool
	log  *slog.Logger
	// started is when this engine first saw time pass; silence before it
	// is the engine's own, not a collector's.
	started time.Time
	seed    maphash.Seed
	// handlers take in each kind of fact (facts.go).
	handlers map[string]factHandler
	// rules is the catalogue the engine runs, split by scope.
	rules ruleSet
	ctx   evalCtx // see newCtx
	// pipe is the alert pipeline (package rules/pipeline), silences
	// included; beforeFlush, when set, is called before a notification is
	// made, so the runner can read the silences first.
	pipe        *pipeline.Pipeline
	beforeFlush func()
	// cause is the timing of the fact being observed (causeOf), nil
	// outside an observation: the alerts it changes carry it.
	cause   *alert.Timing
	causeOf alert.Timing
}

// SetHostFilter makes the engine load only the states of the hosts owns
// accepts (by subject token): on a partitioned facts stream, its
// partition's. nil: every host.
func (e *Engine) SetHostFilter(owns func(hostToken string) bool) { e.owns = owns }

// SetBeforeFlush has f called before each notification is made, so that
// the runner can read the silences first; nil: nothing.
func (e *Engine) SetBeforeFlush(f func()) { e.beforeFlush = f }

// NewEngine returns an engine with no state that runs Catalogue(). cfg
// should be validated (as config.Load does); zero thresholds switch the
// rules that use them off.
func NewEngine(cfg config.RulesConfig, log *slog.Logger) *Engine {
	return NewEngineWith(cfg, Catalogue(), log)
}

// NewEngineWith is NewEngine running the rules of catalogue instead, such
// as Catalogue() plus a rule being tried out.
func NewEngineWith(cfg config.RulesConfig, catalogue []Rule, log *slog.Logger) *Engine {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{cfg: cfg, hosts: map[string]*hostState{}, disabled: map[string]bool{}, log: log, seed: maphash.MakeSeed(),
		handlers: factHandlers(), rules: newRuleSet(catalogue)}
	declaredHandlers(e.handlers, e.rules.declared)
	for _, n := range cfg.Disabled {
		e.disabled[n] = true
	}
	e.pipe = e.newPipeline()
	return e
}

func (e *Engine) host(name string) *hostState {
	h := e.hosts[name]
	if h == nil {
		h = newHostState(name)
		e.hosts[name] = h
	}
	return h
}

// Observe takes one fact from the bus into account at time now. A fact it
// cannot read is reported as an error and changes nothing. The fact's kind
// is its envelope's schema; the subject has been checked against the host.
func (e *Engine) Observe(env bus.Envelope, now time.Time) error {
	return e.observeAt(env, time.Time{}, now)
}

// observeAt is Observe of a fact the bus stored at published (zero when
// not known): the alerts it starts or changes carry its timing.
func (e *Engine) observeAt(env bus.Envelope, published time.Time, now time.Time) error {
	e.causeOf = alert.Timing{Read: env.CollectedAt, Published: published, Judged: now}
	e.cause = &e.causeOf
	err := e.observe(env, now)
	e.cause = nil
	return err
}

func (e *Engine) observe(env bus.Envelope, now time.Time) error {
	kind, ok := facts.KindOfSchema(env.Schema)
	if !ok {
		return fmt.Errorf("observe: unknown schema %q", env.Schema)
	}
	handle, ok := e.handlers[kind]
	if !ok {
		return fmt.Errorf("observe: unknown kind %q", kind)
	}
	if env.Host == "" {
		return fmt.Errorf("observe %s: envelope has no host", kind)
	}
	e.start(now)
	h := e.host(env.Host)
	var sum uint64
	if handle.dedupe {
		sum = maphash.Bytes(e.seed, env.Data)
	}
	if sum != 0 && h.unchanged(sum) {
		// The same facts as last time: nothing to decode or judge again.
		// Freshness still counts, and time-based rules run at Tick.
		e.noteSuccess(h, env)
		e.settle(h, now)
		return nil
	}
	if err := handle.observe.Handle(observation{e: e, h: h, sum: sum, now: now}, env); err != nil {
		return err
	}
	e.evalScopesOf(h, kind, now)
	if !handle.reportsFailure && env.Collector != "" {
		e.noteSuccess(h, env)
	}
	e.evalWatcher(h, now)
	if handle.correlate {
		e.evalCorrelate(h, now)
	}
	e.settle(h, now)
	return nil
}

func (e *Engine) start(now time.Time) {
	if e.started.IsZero() {
		e.started = now
	}
}

// settle runs the pipeline's stages every change ends with.
func (e *Engine) settle(h *hostState, now time.Time) {
	if e.pipe.Settle(&h.Book, now) {
		h.dirty = true
	}
}

// Tick runs the time-based rules (stale data, scrub age, holds expiring,
// pending alerts reaching their `for`) and returns the notifications due.
func (e *Engine) Tick(now time.Time) []alert.Notification {
	e.start(now)
	var out []alert.Notification
	for _, name := range e.hostNames() {
		h := e.hosts[name]
		if now.Sub(h.evalAt) >= reevalEvery {
			h.evalAt = now
			if h.pools != nil {
				e.evalStatus(h, now)
			}
			if h.capacity != nil {
				e.evalCapacity(h, now)
			}
			e.evalDeclared(h, now)
			if h.snapshots != nil {
				e.evalSnapshots(h, now)
			}
			e.evalPools(h, now)
			for _, k := range sortedKeys(h.smart) {
				e.evalSmart(h, h.smart[k], now)
			}
			e.evalARCHold(h, now)
			if len(kernelMemory.peek(h).disks()) > 0 || h.hasScope(scopeKernel) {
				e.evalKernel(h, now)
			}
			e.evalWatcher(h, now)
			e.evalCorrelate(h, now)
		}
		e.settle(h, now)
		out = append(out, e.flush(h, now)...)
	}
	return out
}

func (e *Engine) hostNames() []string {
	names := make([]string, 0, len(e.hosts))
	for n := range e.hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Alerts returns the host's (or every host's, with host "") current alerts:
// pending, firing, and resolved ones whose notice is not sent yet.
func (e *Engine) Alerts(host string) []alert.Alert {
	var out []alert.Alert
	for _, name := range e.hostNames() {
		if host != "" && name != host {
			continue
		}
		for _, t := range e.hosts[name].Alerts {
			out = append(out, t.A)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessAlert(&out[i], &out[j]) })
	return out
}

// evalCtx collects the conditions one scope's rules report.
type evalCtx struct {
	e   *Engine
	h   *hostState
	now time.Time
	cfg *config.RulesConfig
	out []cond
}

// newCtx starts an evaluation. Evaluations run one at a time and nothing
// keeps a context past its apply, so the engine reuses one, conditions
// slice included: rules are called through the catalogue, and a fresh
// context would escape to the heap at every evaluation.
func (e *Engine) newCtx(h *hostState, now time.Time) *evalCtx {
	clear(e.ctx.out)
	e.ctx = evalCtx{e: e, h: h, now: now, cfg: &e.cfg, out: e.ctx.out[:0]}
	return &e.ctx
}

// emit records a condition unless its rule is disabled.
func (c *evalCtx) emit(cd cond) {
	if c.e.disabled[cd.name] {
		return
	}
	l := make(map[string]string, len(cd.labels)+2)
	for k, v := range cd.labels {
		l[k] = v
	}
	cd.labels = l
	cd.labels["alertname"] = cd.name
	cd.labels["host"] = c.h.Host
	c.out = append(c.out, cd)
}

// previous returns the alert a condition had last time, if it is active.
func (c *evalCtx) previous(name string, labels map[string]string) *tracked {
	l := copyMap(labels)
	l["alertname"] = name
	l["host"] = c.h.Host
	t := c.h.Alerts[alert.Fingerprint(l)]
	if t == nil || t.A.State == alert.Resolved {
		return nil
	}
	return t
}

func (e *Engine) evalStatus(h *hostState, now time.Time) {
	c := e.newCtx(h, now)
	h.Leaves = h.Leaves[:0]
	for _, p := range h.pools {
		if p == nil {
			continue
		}
		e.indexLeaves(h, p)
		for _, rule := range e.rules.pool {
			rule(c, p)
		}
	}
	e.apply(h, scopeStatus, c.out, now)
	e.noteResilverEnds(h)
}

func (e *Engine) evalCapacity(h *hostState, now time.Time) {
	c := e.newCtx(h, now)
	for i := range h.capacity.pools {
		p := &h.capacity.pools[i]
		p.CapacityPct = usableFullness(p, h.capacity.datasets)
		recordCapacity(c, p)
		for _, rule := range e.rules.poolCapacity {
			rule(c, p)
		}
	}
	// Forget the history of pools that are gone (destroyed, or exported
	// on purpose); a missing pool keeps it for when it is back.
	samples := forecastMemory.peek(h).pools()
	for name := range samples {
		found := false
		for i := range h.capacity.pools {
			found = found || h.capacity.pools[i].Name == name
		}
		if !found && len(h.capacity.pools) > 0 && !e.poolMissing(h, name) {
			delete(samples, name)
			h.dirty = true
		}
	}
	e.apply(h, scopeCapacity, c.out, now)
}

// evalSnapshots runs the snapshot rules over every dataset with snapshots
// and every dataset the datasets fact lists without any.
func (e *Engine) evalSnapshots(h *hostState, now time.Time) {
	c := e.newCtx(h, now)
	seen := map[string]bool{}
	if h.snapshots != nil {
		for i := range h.snapshots.Datasets {
			s := &h.snapshots.Datasets[i]
			seen[s.Dataset] = true
			for _, rule := range e.rules.snapshot {
				rule(c, s)
			}
		}
	}
	// Without a snapshot listing yet, "no snapshots" is not known.
	if h.datasets != nil && h.snapshots != nil {
		for i := range h.datasets.Datasets {
			name := h.datasets.Datasets[i].Name
			if seen[name] {
				continue
			}
			none := zfs.SnapshotStats{Dataset: name}
			for _, rule := range e.rules.snapshot {
				rule(c, &none)
			}
		}
	}
	e.apply(h, scopeSnapshots, c.out, now)
}

// evalPools runs the rules about the host's pools together.
func (e *Engine) evalPools(h *hostState, now time.Time) {
	c := e.newCtx(h, now)
	for _, rule := range e.rules.pools {
		rule(c)
	}
	e.apply(h, scopePools, c.out, now)
	// What zpool import found may be newer than the facts the other
	// alerts came from: mark those of pools it says are not imported.
	for _, t := range h.Alerts {
		if t.A.State == alert.Firing {
			e.markReported(h, t, t.Scope)
		}
	}
}

func (e *Engine) evalSmart(h *hostState, r *smart.Report, now time.Time) {
	key := r.Serial
	if key == "" {
		key = r.Device
	}
	if key == "" {
		return // nothing identifies the disk: its collector error says why
	}
	h.smart[key] = r
	e.indexDisk(h, r, now)
	c := e.newCtx(h, now)
	for _, rule := range e.rules.disk {
		rule(c, r)
	}
	for i := range c.out {
		c.out[i].serial = r.Serial
		if c.out[i].pool == "" {
			c.out[i].pool = h.poolOfSerial(r.Serial)
		}
	}
	e.apply(h, scopeSmart+key, c.out, now)
}

func (e *Engine) evalARC(h *hostState, a *zfs.ARC, now time.Time) { e.runARC(h, a, now) }

// evalARCHold re-runs the ARC rules between readings (a is nil for them),
// so a throttling alert ends when its hold runs out.
func (e *Engine) evalARCHold(h *hostState, now time.Time) { e.runARC(h, nil, now) }

func (e *Engine) runARC(h *hostState, a *zfs.ARC, now time.Time) {
	c := e.newCtx(h, now)
	for _, rule := range e.rules.arc {
		rule(c, a)
	}
	e.apply(h, scopeARC, c.out, now)
}

func (e *Engine) evalWatcher(h *hostState, now time.Time) {
	c := e.newCtx(h, now)
	for _, rule := range e.rules.watcher {
		rule(c)
	}
	e.apply(h, scopeWatcher, c.out, now)
}

func (e *Engine) evalCorrelate(h *hostState, now time.Time) {
	c := e.newCtx(h, now)
	for _, rule := range e.rules.correlate {
		rule(c)
	}
	e.apply(h, scopeCorrelate, c.out, now)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
