package rules

import (
	"strconv"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules/pipeline"
	"github.com/zwatch/zwatch/silence"
)

// The engine's side of the alert pipeline (package rules/pipeline): rules
// judge facts into conditions (cond), apply hands a scope's conditions to
// the pipeline, and the engine's decisions the pipeline asks for (each
// alert's `for`, the group timings, the inhibitions, which alerts are kept
// while their pool is missing) are given to it here.

// tracked is one alert and what has been told about it; groupState a
// group waiting for its flush.
type (
	tracked    = pipeline.Tracked
	groupState = pipeline.GroupState
)

// Inhibitions, declared by the catalogue (AlertInfo.Inhibits,
// AlertInfo.InhibitedBy; inhibitRules).
type (
	InhibitRule = pipeline.InhibitRule
	Matcher     = pipeline.Matcher
	LabelMatch  = pipeline.LabelMatch
)

// maxResolved bounds the resolved alerts one host keeps.
const maxResolved = pipeline.MaxResolved

// cond is what a rule reports: a condition that holds now. The pipeline
// turns conditions into alerts (pending → firing → resolved).
type cond struct {
	name     string
	severity alert.Severity
	labels   map[string]string
	summary  string
	desc     string
	evidence map[string]string
	repl     *alert.Replacement
	// news identifies an event the person must hear of even though the
	// alert already fires (pipeline.Cond.News).
	news uint64
	// count is a rising count, news only at the next power of ten
	// (pipeline.Cond.Count).
	count  uint64
	serial string
	pool   string
}

func (c *cond) pipeline() pipeline.Cond {
	return pipeline.Cond{Name: c.name, Severity: c.severity, Labels: c.labels, Summary: c.summary, Description: c.desc,
		Evidence: c.evidence, Replacement: c.repl, News: c.news, Count: c.count, Serial: c.serial, Pool: c.pool}
}

// newPipeline gives the pipeline what it needs of the catalogue and cfg.
func (e *Engine) newPipeline() *pipeline.Pipeline {
	forOf := make(map[string]time.Duration, len(e.rules.defaultFor)+len(e.cfg.For))
	for n, d := range e.rules.defaultFor {
		forOf[n] = d
	}
	for n, d := range e.cfg.For {
		forOf[n] = d.D()
	}
	return pipeline.New(pipeline.Config{
		For:            forOf,
		RepeatCritical: e.cfg.RepeatCritical.D(), RepeatWarning: e.cfg.RepeatWarning.D(),
		GroupBy: e.cfg.GroupBy, GroupWait: e.cfg.GroupWait.D(), GroupInterval: e.cfg.GroupInterval.D(),
		AtOnce: e.rules.atOnce, Inhibit: e.rules.inhibit, MarkTest: e.cfg.MarkTest, Unkeep: unkeep,
		Escalate: e.cfg.Escalate,
	})
}

// apply replaces the conditions of one scope (the set one kind of fact
// decides) with conds: new ones start, gone ones resolve (pipeline.Dedup),
// unless their pool is missing (keep).
func (e *Engine) apply(h *hostState, scope string, conds []cond, now time.Time) {
	if e.pipe.Dedup(&h.Book, scope, len(conds), func(i int) pipeline.Cond { return conds[i].pipeline() }, pipeline.Hooks{
		Reported: func(t *tracked) { e.markReported(h, t, scope) },
		Keep:     func(t *tracked) bool { return e.keep(h, t, scope) },
		Cause:    e.cause,
	}, now) {
		h.dirty = true
	}
}

// resolve ends an alert (pipeline.Resolve).
func (e *Engine) resolve(h *hostState, fp string, t *tracked, now time.Time) {
	h.dirty = true
	e.pipe.Resolve(&h.Book, fp, t, now)
}

// inhibit marks the alerts a firing source alert carries.
func (e *Engine) inhibit(h *hostState) {
	if e.pipe.Inhibit(&h.Book) {
		h.dirty = true
	}
}

// flush sends every group of h whose time has come.
func (e *Engine) flush(h *hostState, now time.Time) []alert.Notification {
	out, changed := e.pipe.Flush(&h.Book, h.Host, e.beforeFlush, now)
	up, escalated := e.pipe.Escalate(&h.Book, h.Host, now)
	if changed || escalated {
		h.dirty = true
	}
	return append(out, up...)
}

// DueFor reports whether a notification of host is ready to go now, so
// that the runner can send it at once instead of at its next tick.
func (e *Engine) DueFor(host string, now time.Time) bool {
	h := e.hosts[host]
	return h != nil && pipeline.DueNow(&h.Book, now)
}

// SetSilences gives the engine the silences to apply (the runner reads
// them from the state bucket); expired ones are harmless.
func (e *Engine) SetSilences(list []silence.Silence) { e.pipe.SetSilences(list) }

// silencedBy returns the silence that keeps t from being sent at now.
func (e *Engine) silencedBy(t *tracked, now time.Time) *silence.Silence {
	return e.pipe.SilencedBy(t, now)
}

// SilenceExpiredAlert names the one-line info notice sent when a silence
// ends by itself.
const SilenceExpiredAlert = silence.ExpiredAlert

// ExpiryNoticeID is the notification ID of a silence's expiry notice
// (silence.NoticeID).
func ExpiryNoticeID(id string) string { return silence.NoticeID(id) }

// ExpiryNotice is the notice, sent on host's subject, that s ended by
// itself, naming the alerts it silenced that still fire, of every host
// (silence.ExpiryNotice).
func (e *Engine) ExpiryNotice(s *silence.Silence, host string, now time.Time) alert.Notification {
	var firing []silence.Held
	for _, name := range e.hostNames() {
		h := e.hosts[name]
		for _, fp := range sortedKeys(h.Alerts) {
			t := h.Alerts[fp]
			if t.A.State == alert.Firing && !t.Inhibited {
				firing = append(firing, silence.Held{Host: name, Alert: &t.A, Pool: t.Pool, Serial: t.Serial})
			}
		}
	}
	return silence.ExpiryNotice(s, host, firing, e.cfg.MarkTest, now)
}

// lessAlert orders alerts for people: firing before resolved, worst first.
func lessAlert(a, b *alert.Alert) bool { return pipeline.Less(a, b) }

func copyMap(m map[string]string) map[string]string { return pipeline.CopyMap(m) }

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
