package rules

import (
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// Rule is one rule of the catalogue: the code that judges one kind of
// object (a pool, a disk's SMART report, the host's collectors…) and the
// alerts that code can raise.
//
// A rule is the unit of code and an alert name the unit of configuration:
// one evaluation of a pool's scrub state decides ScrubNever, ScrubOverdue,
// ScrubErrors and ScrubPaused together, yet each has its own `for`,
// thresholds, inhibitions and line in the docs. So a Rule carries one Eval
// and lists every name it raises in Alerts; most rules raise one.
type Rule struct {
	// Reads are the kinds of fact whose content the rule judges.
	Reads []facts.Kind
	// Eval is the rule's code. It fixes the rule's scope, what the engine
	// calls it with and when: the objects of one kind of fact through a
	// declared scope (eachDataset.each(…), scope.go), or one of the
	// engine's own scopes by its type (poolEval, diskEval, …).
	Eval evaluator
	// MachineLocal: the rule judges the machine zwatch itself runs on (its
	// kernel's ARC, the tools it may run) rather than the pools and disks the
	// facts describe, so a replay of recorded facts (zwatch simulate) cannot
	// stand in for it.
	MachineLocal bool
	// Memory lists what the rule remembers of a host between facts: its own
	// memory, declared in its file with remember (memory.go), or one it
	// shares with the rules it lists. A saved state keeps the memories its
	// catalogue lists, and only those.
	Memory []memoryDef
	// Alerts are the names the rule raises, in the order the docs list them.
	Alerts []AlertInfo
	// Config are the sections under rules: whose keys the rule reads (its
	// thresholds), such as kernelConfig. One rule file defines each
	// (defineConfig); the other rules that read it name it too. The
	// catalogue hands them to config (ConfigSections).
	Config []config.RuleSection
}

// AlertInfo describes one alert name: what config may set for it, how the
// docs describe it, and which alerts it carries or is carried by.
type AlertInfo struct {
	// Name is the alertname label and the key of rules.for and rules.disabled.
	Name string
	// For is how long the condition is pending before it fires, unless
	// rules.for overrides it. Facts that are already settled when reported
	// (a FAULTED disk, a failed SMART check) fire at once; readings that
	// wobble wait.
	For time.Duration
	// Thresholds are the config keys under rules: the alert depends on,
	// from its rule's Config sections (kernelConfig.thresholds("bursts")).
	Thresholds []Threshold
	// Severity and Condition are its cells of the table in docs/rules.md.
	// {key} stands for the default of threshold key, {for} for For, so the
	// docs cannot state other defaults than the code uses.
	Severity, Condition string
	// Inhibits are the inhibitions this alert is the source of; their
	// Source names no alert (it is this one).
	Inhibits []InhibitRule
	// InhibitedBy are the inhibitions this alert is a target of; their
	// Target names no alert (it is this one). A rule that carries the parts
	// of something (a dead pool) thus needs no list of its parts.
	InhibitedBy []InhibitRule
	// AtOnce: its first page never waits group_wait behind an earlier page
	// of its group. For a state that changes what the person must do (a
	// pool that stopped all I/O), not for parts of a cascade.
	AtOnce bool
}

// Threshold is one config key an alert depends on and its default, written
// as in docs/rules.md ("80", "24h", "35d"); configSection.threshold derives
// it from the section's defaults.
type Threshold struct {
	Key     string // below rules:, such as capacity.warning
	Default string
}

// Scope is what a rule judges, and so where in the engine it runs.
type Scope string

// The engine's own scopes, each with the type its rules' Eval has. A
// declared scope (scope.go) is its key.
const (
	ScopePool         Scope = "pool"          // poolEval: each pool of a zpool status
	ScopePoolCapacity Scope = "pool capacity" // poolCapacityEval: each pool of zpool list
	ScopeSnapshot     Scope = "snapshot"      // snapshotEval: each dataset's snapshots, or a dataset without any
	ScopePools        Scope = "pools"         // poolsEval: the host's pools together (those not imported)
	ScopeDisk         Scope = "disk"          // diskEval: each disk's SMART report
	ScopeARC          Scope = "arc"           // arcEval: each ARC reading, and ticks without one
	ScopeWatcher      Scope = "watcher"       // watcherEval: the host's collectors and heartbeat
	ScopeCorrelate    Scope = "correlate"     // correlateEval: alerts of the other scopes joined by disk
	ScopeKernel       Scope = "kernel"        // kernelEval: each disk the kernel log complained about (scope_kernel.go)
)

// evaluator is a rule's code; the engine runs each kind in its scope.
type evaluator interface{ scope() Scope }

// The evaluator kinds. A rule's conditions go to c.emit. All of a scope's
// rules run in catalogue order at each evaluation of their scope; a
// condition they stop reporting resolves.
type (
	poolEval         func(c *evalCtx, p *zfs.Pool)
	poolCapacityEval func(c *evalCtx, p *zfs.PoolList)
	// snapshotEval gets each dataset with snapshots, and each dataset of
	// the datasets fact without any (Count 0), so a backup target that never
	// received one is judged too.
	snapshotEval func(c *evalCtx, s *zfs.SnapshotStats)
	poolsEval    func(c *evalCtx)
	diskEval     func(c *evalCtx, r *smart.Report)
	// arcEval gets a nil reading at a tick: time-based conditions (a
	// throttle hold) end then, and a rule that judges the reading keeps
	// reporting what the last one showed.
	arcEval       func(c *evalCtx, a *zfs.ARC)
	watcherEval   func(c *evalCtx)
	correlateEval func(c *evalCtx)
)

func (poolEval) scope() Scope         { return ScopePool }
func (poolCapacityEval) scope() Scope { return ScopePoolCapacity }
func (snapshotEval) scope() Scope     { return ScopeSnapshot }
func (poolsEval) scope() Scope        { return ScopePools }
func (diskEval) scope() Scope         { return ScopeDisk }
func (arcEval) scope() Scope          { return ScopeARC }
func (watcherEval) scope() Scope      { return ScopeWatcher }
func (correlateEval) scope() Scope    { return ScopeCorrelate }

// Scope is where the rule runs; "" for a rule without code.
func (r Rule) Scope() Scope {
	if r.Eval == nil {
		return ""
	}
	return r.Eval.scope()
}

// Alerts lists the alert names of a catalogue, in order.
func Alerts(catalogue []Rule) []AlertInfo {
	var out []AlertInfo
	for _, r := range catalogue {
		out = append(out, r.Alerts...)
	}
	return out
}

// Names lists every alert name the engine can raise, in catalogue order.
func Names() []string { return AlertNames(Catalogue()) }

// AlertNames lists the alert names of a catalogue in order: what config
// validates rules.for and rules.disabled against (config.Catalog.Rules).
func AlertNames(catalogue []Rule) []string {
	var out []string
	for _, a := range Alerts(catalogue) {
		out = append(out, a.Name)
	}
	return out
}

// ruleSet is a catalogue split by scope, in catalogue order, once per
// engine: an evaluation then runs a plain slice.
type ruleSet struct {
	pool         []poolEval
	poolCapacity []poolCapacityEval
	snapshot     []snapshotEval
	pools        []poolsEval
	disk         []diskEval
	arc          []arcEval
	watcher      []watcherEval
	correlate    []correlateEval
	kernel       []kernelEval
	// declared are the scopes rules declare over one kind of fact (scope.go).
	declared []declaredScope
	// defaultFor is each alert's pending duration unless rules.for overrides it.
	defaultFor map[string]time.Duration
	inhibit    []InhibitRule
	// atOnce are the alert names whose first page skips group_wait.
	atOnce map[string]bool
	// memories are the names of the memories the rules keep (Rule.Memory).
	memories map[string]bool
}

func newRuleSet(catalogue []Rule) ruleSet {
	s := ruleSet{defaultFor: map[string]time.Duration{}, inhibit: inhibitRules(catalogue), atOnce: map[string]bool{},
		memories: memoryNames(catalogue), declared: declaredScopes(catalogue)}
	for _, r := range catalogue {
		switch ev := r.Eval.(type) {
		case poolEval:
			s.pool = append(s.pool, ev)
		case poolCapacityEval:
			s.poolCapacity = append(s.poolCapacity, ev)
		case snapshotEval:
			s.snapshot = append(s.snapshot, ev)
		case poolsEval:
			s.pools = append(s.pools, ev)
		case diskEval:
			s.disk = append(s.disk, ev)
		case arcEval:
			s.arc = append(s.arc, ev)
		case watcherEval:
			s.watcher = append(s.watcher, ev)
		case correlateEval:
			s.correlate = append(s.correlate, ev)
		case kernelEval:
			s.kernel = append(s.kernel, ev)
		}
		for _, a := range r.Alerts {
			s.defaultFor[a.Name] = a.For
			if a.AtOnce {
				s.atOnce[a.Name] = true
			}
		}
	}
	return s
}
