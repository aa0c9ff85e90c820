// Package pipeline is the rule engine's alert pipeline, in the manner of
// Alertmanager's notify pipeline. Rules (package rules) judge facts into
// conditions; the pipeline owns what happens to them after, and each
// host's alert book (Book) that remembers it. Its stages run in order,
// each in its own file: dedup → group → inhibit → silence → repeat/resolve,
// and the notifications go back to the runner for the outbox.
//
//  1. dedup (dedup.go): conditions become tracked alerts by fingerprint,
//     pending until their `for`, resolved when their condition stops.
//  2. group (group.go): alerts join groups (host plus group_by labels);
//     a group with something due gets its flush time (group_wait,
//     group_interval).
//  3. inhibit (inhibit.go): alerts a firing source alert carries are
//     marked and not sent.
//  4. silence (silence.go): a firing alert an active silence mutes is not
//     sent (package silence decides which silence mutes it).
//  5. repeat/resolve (repeat.go): what of a group is due (a first page, a
//     rise, news, a repeat, a resolved notice after its page) becomes one
//     notification, and gc bounds what is left.
//  6. outbox: Flush returns the notifications to the runner, which puts
//     them on the durable outbox.
//
// Settle runs dedup's promotion, inhibit and group after every change;
// whether an alert is due asks inhibit, silence and repeat in that order
// (due). Flush runs at each tick.
//
// The pipeline knows nothing of rules: what it needs of the catalogue and
// the configuration comes in Config, and the pool-keeping decision of the
// engine (an alert kept while its pool is missing) as Hooks.
package pipeline

import (
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/silence"
)

// Config is what the stages need of the catalogue and rules configuration.
type Config struct {
	// For is each alert's pending duration, rules.for applied; an alert
	// not named fires at once.
	For map[string]time.Duration
	// RepeatCritical and RepeatWarning are how often a firing alert is
	// sent again; info is told once.
	RepeatCritical, RepeatWarning time.Duration
	GroupBy                       []string
	GroupWait, GroupInterval      time.Duration
	// AtOnce are the alert names whose first page skips group_wait.
	AtOnce  map[string]bool
	Inhibit []InhibitRule
	// MarkTest marks every notification as a test.
	MarkTest bool
	// Escalate are notify.escalation's delays, in order, counted from an
	// incident's first critical page (escalate.go).
	Escalate []time.Duration
	// Unkeep takes the kept mark off an alert that resolves or is reported
	// again (rules/pools.go); nil when nothing is kept.
	Unkeep func(*Tracked)
}

// Pipeline runs the stages over hosts' books. It is not safe for
// concurrent use.
type Pipeline struct {
	cfg Config
	// silences are those the silence stage applies (SetSilences).
	silences []silence.Silence
}

// New returns a pipeline with cfg and no silences.
func New(cfg Config) *Pipeline { return &Pipeline{cfg: cfg} }

// Settle runs the stages every change ends with: pending alerts whose
// `for` passed fire (dedup), inhibitions are marked (inhibit), and every
// group with something due gets its flush time (group). It reports
// whether b changed.
func (p *Pipeline) Settle(b *Book, now time.Time) bool {
	changed := p.promote(b, now)
	changed = p.inhibit(b) || changed
	return p.schedule(b, now) || changed
}

// due reports whether t has something the person has not been told: it
// is not inhibited, not silenced, and the repeat/resolve stage has
// something to send.
func (p *Pipeline) due(t *Tracked, now time.Time) (due, repeat bool) {
	if t.Inhibited {
		return false, false
	}
	if t.A.State == alert.Firing && p.silenced(t, now) {
		return false, false
	}
	return p.unsent(t, now)
}
