package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
)

func collectorStaleRule() Rule {
	return Rule{
		Reads: []string{facts.KindHeartbeat, facts.KindCollectorError},
		Eval:  watcherEval(ruleCollectorStale),
		Alerts: []AlertInfo{{
			Name: nameCollectorStale,
			// zpool list waits while zpool create or import holds the pool
			// lock: a collector a few intervals late is not news, one silent
			// for another minute is (seen on real OpenZFS in make e2e).
			For:        time.Minute,
			Thresholds: []Threshold{{"watcher.stale_intervals", "3"}},
			Severity:   "warning",
			Condition: "no fresh message from a collector for `watcher.stale_intervals` ({watcher.stale_intervals}) of its heartbeat interval; " +
				"`for` {for} (zpool list is late while `zpool create`/`import` holds the pool lock)",
		}},
	}
}

func hostSilentRule() Rule {
	return Rule{
		Reads: []string{facts.KindHeartbeat},
		Eval:  watcherEval(ruleHostSilent),
		Alerts: []AlertInfo{{
			Name:       nameHostSilent,
			Thresholds: []Threshold{{"watcher.silent_after", "3m"}},
			Severity:   "critical",
			Condition:  "no heartbeat for `watcher.silent_after` ({watcher.silent_after})",
		}},
	}
}

func commandHangsRule() Rule {
	return Rule{
		Reads: []string{facts.KindCollectorError},
		Eval:  watcherEval(ruleCommandHangs),
		Alerts: []AlertInfo{{
			Name:       nameCommandHangs,
			Thresholds: []Threshold{{"watcher.timeout_repeats", "3"}},
			Severity:   "critical",
			Condition:  "`watcher.timeout_repeats` ({watcher.timeout_repeats}) timeout/busy errors in a row: \"zpool hangs — pool may be SUSPENDED\"",
		}},
	}
}

// blindSpotRule is machine-local: what it reports is which tools this
// machine lacks or may not run.
func blindSpotRule() Rule {
	return Rule{
		Reads:        []string{facts.KindHeartbeat, facts.KindCollectorError},
		Eval:         watcherEval(ruleBlindSpot),
		MachineLocal: true,
		Alerts: []AlertInfo{{
			Name:      nameBlindSpot,
			Severity:  "warning",
			Condition: "a collector is disabled or its tool missing/denied",
		}},
	}
}

// The watcher rules are about zwatch's own view: a monitor that quietly
// stopped seeing is worse than none, because people trust its silence.

// noteSuccess records a fresh fact from a collector.
func (e *Engine) noteSuccess(h *hostState, env bus.Envelope) {
	if env.Collector == "" || strings.HasSuffix(env.Schema, "."+facts.KindHeartbeat) {
		return
	}
	st := h.collector(env.Collector)
	at := env.CollectedAt
	if st.LastSeen == nil || at.After(*st.LastSeen) {
		st.LastSeen = &at
	}
	st.TimeoutStreak, st.ErrKind, st.ErrMessage, st.ErrCommand, st.ErrFix = 0, "", "", "", ""
	h.dirty = true
}

func (e *Engine) noteCollectorError(h *hostState, env bus.Envelope, ce facts.CollectorError) {
	name := ce.Collector
	if name == "" {
		name = env.Collector
	}
	st := h.collector(name)
	st.ErrKind, st.ErrMessage, st.ErrCommand, st.ErrFix = ce.Kind, ce.Message, ce.Command, ce.Fix
	if ce.Kind == "timeout" || ce.Kind == "busy" {
		st.TimeoutStreak++
	}
	h.dirty = true
}

func (e *Engine) noteHeartbeat(h *hostState, env bus.Envelope, hb facts.Heartbeat) {
	at := env.CollectedAt
	h.Heartbeat = &at
	for name, ch := range hb.Collectors {
		st := h.collector(name)
		st.Interval, st.Disabled = ch.Interval, ch.Disabled
		if ch.LastOK != nil && (st.LastSeen == nil || ch.LastOK.After(*st.LastSeen)) {
			t := *ch.LastOK
			st.LastSeen = &t
		}
		if st.LastSeen == nil {
			// Listed but never heard from: silence counts from now.
			st.LastSeen = &at
		}
	}
	h.dirty = true
}

// sinceRef is the later of t and the engine's start: zwatch cannot blame a
// collector for silence while the engine itself was not running.
func (c *evalCtx) sinceRef(t time.Time) time.Time {
	if c.e.started.After(t) {
		return c.e.started
	}
	return t
}

func sortedCollectors(h *hostState) []string {
	names := make([]string, 0, len(h.Collectors))
	for n := range h.Collectors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// nameCollectorStale: no fresh message from a collector for
// rules.watcher.stale_intervals of its interval (from the heartbeat).
func ruleCollectorStale(c *evalCtx) {
	for _, name := range sortedCollectors(c.h) {
		st := c.h.Collectors[name]
		if st.Interval <= 0 || st.Disabled != "" || st.LastSeen == nil {
			continue
		}
		limit := time.Duration(c.cfg.Watcher.StaleIntervals) * st.Interval
		age := c.now.Sub(c.sinceRef(*st.LastSeen))
		if age <= limit {
			continue
		}
		desc := fmt.Sprintf("The %s collector on %s runs every %s but nothing fresh came for %s, so zwatch's picture of this machine is out of date.",
			name, c.h.Host, st.Interval, age.Truncate(time.Second))
		if st.ErrMessage != "" {
			desc += " Last error: " + st.ErrMessage
		}
		c.emit(cond{name: nameCollectorStale, severity: alert.Warning,
			labels:   map[string]string{"collector": name},
			summary:  fmt.Sprintf("%s: no fresh %s data for %s", c.h.Host, name, fmtDur(age)),
			desc:     desc,
			evidence: map[string]string{"last_seen": st.LastSeen.UTC().Format(time.RFC3339), "interval": st.Interval.String()}})
	}
}

// nameHostSilent: the host's heartbeat stopped (a remote agent died, or
// lost its way to the bus).
func ruleHostSilent(c *evalCtx) {
	hb := c.h.Heartbeat
	if hb == nil {
		return
	}
	age := c.now.Sub(c.sinceRef(*hb))
	if age <= c.cfg.Watcher.SilentAfter.D() {
		return
	}
	c.emit(cond{name: nameHostSilent, severity: alert.Critical,
		labels:   map[string]string{},
		summary:  fmt.Sprintf("%s: zwatch silent for %s", c.h.Host, fmtDur(age)),
		desc:     fmt.Sprintf("No heartbeat from zwatch on %s since %s: it is down, hung, or cannot reach the bus. Nothing on that machine is being watched.", c.h.Host, hb.UTC().Format(time.RFC3339)),
		evidence: map[string]string{"last_heartbeat": hb.UTC().Format(time.RFC3339)}})
}

// nameCommandHangs: a collector's command timed out (or was still stuck)
// rules.watcher.timeout_repeats times in a row. zpool commands hang when a
// pool is SUSPENDED or a controller died — exactly when status cannot say so.
func ruleCommandHangs(c *evalCtx) {
	for _, name := range sortedCollectors(c.h) {
		st := c.h.Collectors[name]
		if st.TimeoutStreak < c.cfg.Watcher.TimeoutRepeats {
			continue
		}
		summary := fmt.Sprintf("%s: %s hangs", c.h.Host, name)
		switch {
		case strings.HasPrefix(name, "zpool"), name == "arc":
			summary = fmt.Sprintf("%s: zpool hangs — pool may be SUSPENDED", c.h.Host)
		case strings.HasPrefix(name, "smart"):
			summary = fmt.Sprintf("%s: smartctl hangs — a disk or controller may be dead", c.h.Host)
		}
		desc := fmt.Sprintf("%d runs of %s in a row timed out or were still stuck.", st.TimeoutStreak, cmdOr(st.ErrCommand, name))
		if st.ErrFix != "" {
			desc += " " + st.ErrFix
		}
		c.emit(cond{name: nameCommandHangs, severity: alert.Critical,
			labels:  map[string]string{"collector": name},
			summary: summary, desc: desc,
			evidence: map[string]string{"timeouts": fmt.Sprint(st.TimeoutStreak), "last_error": st.ErrMessage}})
	}
}

// nameBlindSpot: a tool is missing or not allowed to run, so something is
// not watched at all.
func ruleBlindSpot(c *evalCtx) {
	for _, name := range sortedCollectors(c.h) {
		st := c.h.Collectors[name]
		why := st.Disabled
		if why == "" && (st.ErrKind == "missing" || st.ErrKind == "denied") {
			why = st.ErrMessage
			if st.ErrFix != "" {
				why += ": " + st.ErrFix
			}
		}
		if why == "" {
			continue
		}
		c.emit(cond{name: nameBlindSpot, severity: alert.Warning,
			labels:   map[string]string{"collector": name},
			summary:  fmt.Sprintf("%s: monitoring blind spot — %s is not running", c.h.Host, name),
			desc:     fmt.Sprintf("zwatch cannot run the %s collector on %s: %s", name, c.h.Host, why),
			evidence: map[string]string{"kind": st.ErrKind}})
	}
}

func cmdOr(cmd, name string) string {
	if cmd != "" {
		return "`" + cmd + "`"
	}
	return name
}
