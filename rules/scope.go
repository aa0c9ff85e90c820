package rules

import (
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
)

// A declared scope is what a rule judges when that is the objects of one
// kind of fact: each dataset of the datasets fact, each drive a tape
// library reports. It is one declaration, beside the kind's first rule:
//
//	var eachDataset = scopeOf(facts.Datasets, "datasets",
//		func(d *facts.DatasetsData) []facts.DatasetState { return d.Datasets })
//
// and a rule over it is Eval: eachDataset.each(ruleX). The engine does the
// rest, with no code of the scope's own: it keeps each host's latest fact
// of the kind, runs the scope's rules over its objects when one arrives
// and at each re-evaluation (Tick), in catalogue order, and resolves what
// they stop reporting. The scopes of rule.go (poolEval, diskEval, …) are
// the engine's own because they join kinds: a pool's tree with its disks'
// SMART reports, the pools' capacity with their datasets.
type objectScope[T, O any] struct {
	// key is the scope of the alerts its rules raise (tracked.Scope). It is
	// saved with them, so it never changes once released.
	key     string
	kind    facts.KindOf[T]
	objects func(*T) []O
	// latest is where a kind the engine takes in itself (factHandlers)
	// keeps its latest fact; nil: the scope keeps it (hostState.latest).
	latest func(h *hostState) *T
}

// scopeOf declares the scope key: each object objects lists of the latest
// fact of kind k. The kind must name one fact per host: a per-target kind
// (a disk's SMART report) is one fact per target.
func scopeOf[T, O any](k facts.KindOf[T], key string, objects func(*T) []O) *objectScope[T, O] {
	return &objectScope[T, O]{key: key, kind: k, objects: objects}
}

// keptIn makes the scope read a kind the engine already takes in from
// where its handler keeps the latest fact, instead of decoding it again.
func (s *objectScope[T, O]) keptIn(latest func(h *hostState) *T) *objectScope[T, O] {
	s.latest = latest
	return s
}

// each is the Eval of a rule that judges every object of the scope.
func (s *objectScope[T, O]) each(fn func(c *evalCtx, o *O)) evaluator {
	return objectEval[T, O]{s: s, fn: fn}
}

// objectEval is a rule's code over a declared scope.
type objectEval[T, O any] struct {
	s  *objectScope[T, O]
	fn func(c *evalCtx, o *O)
}

func (ev objectEval[T, O]) scope() Scope { return Scope(ev.s.key) }

func (ev objectEval[T, O]) declaration() any { return ev.s }

func (ev objectEval[T, O]) newScope() declaredScope { return &scopeRules[T, O]{s: ev.s} }

// declaredEval is an evaluator over a declared scope, whatever its types.
type declaredEval interface {
	evaluator
	// declaration identifies the scope: rules over one declaration run together.
	declaration() any
	newScope() declaredScope
}

// declaredScope is one declared scope of an engine's catalogue and its
// rules, in catalogue order.
type declaredScope interface {
	kind() facts.Kind
	key() string
	add(ev evaluator)
	// eval runs the rules over the host's latest fact of the kind, if any.
	eval(e *Engine, h *hostState, now time.Time)
	// handler takes in a fact of a kind no factHandler reads.
	handler() factHandler
}

type scopeRules[T, O any] struct {
	s     *objectScope[T, O]
	rules []func(c *evalCtx, o *O)
}

func (g *scopeRules[T, O]) kind() facts.Kind { return g.s.kind }
func (g *scopeRules[T, O]) key() string      { return g.s.key }

func (g *scopeRules[T, O]) add(ev evaluator) {
	g.rules = append(g.rules, ev.(objectEval[T, O]).fn)
}

func (g *scopeRules[T, O]) eval(e *Engine, h *hostState, now time.Time) {
	var p *T
	if g.s.latest != nil {
		p = g.s.latest(h)
	} else if kept, ok := h.latest[g.s.kind.Name()].(*T); ok {
		p = kept
	}
	if p == nil {
		return // no fact of the kind yet: nothing is known, nothing resolves
	}
	c := e.newCtx(h, now)
	objs := g.s.objects(p)
	for i := range objs {
		for _, rule := range g.rules {
			rule(c, &objs[i])
		}
	}
	e.apply(h, g.s.key, c.out, now)
}

// handler keeps each fact of the kind as the host's latest, in memory like
// the other latest facts, and runs every declared scope over it. The same
// payload again is no news (dedupe); Tick still re-runs the rules.
func (g *scopeRules[T, O]) handler() factHandler {
	name := g.s.kind.Name()
	return factHandler{dedupe: true, observe: facts.HandlerOf(g.s.kind, func(o observation, _ bus.Envelope, d *T) error {
		if o.h.latest == nil {
			o.h.latest = map[string]any{}
		}
		o.h.latest[name] = d
		o.h.remember(name, o.sum)
		return nil
	})}
}

// declaredScopes groups the catalogue's rules over declared scopes by
// scope, in catalogue order.
func declaredScopes(catalogue []Rule) []declaredScope {
	var out []declaredScope
	byDecl := map[any]declaredScope{}
	for _, r := range catalogue {
		ev, ok := r.Eval.(declaredEval)
		if !ok {
			continue
		}
		g := byDecl[ev.declaration()]
		if g == nil {
			g = ev.newScope()
			byDecl[ev.declaration()] = g
			out = append(out, g)
		}
		g.add(ev)
	}
	return out
}

// evalScopesOf runs the declared scopes over kind, after a fact of it.
func (e *Engine) evalScopesOf(h *hostState, kind string, now time.Time) {
	for _, g := range e.rules.declared {
		if g.kind().Name() == kind {
			g.eval(e, h, now)
		}
	}
}

// evalDeclared runs every declared scope: the re-evaluation at Tick.
func (e *Engine) evalDeclared(h *hostState, now time.Time) {
	for _, g := range e.rules.declared {
		g.eval(e, h, now)
	}
}

// declaredHandlers adds to handlers the kinds that only declared scopes
// read, so that Observe takes them in.
func declaredHandlers(handlers map[string]factHandler, declared []declaredScope) {
	for _, g := range declared {
		if _, ok := handlers[g.kind().Name()]; !ok {
			handlers[g.kind().Name()] = g.handler()
		}
	}
}
