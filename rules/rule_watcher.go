package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
)

// watcherSettings are rules.watcher: alerts about zwatch's own view of the
// machine.
type watcherSettings struct {
	// StaleIntervals: a collector silent for this many of its intervals is stale.
	StaleIntervals int `yaml:"stale_intervals" doc:"no fresh data from a collector for this many intervals → warning"`
	// SilentAfter: a host whose heartbeat is this old is silent.
	SilentAfter config.Duration `yaml:"silent_after" doc:"a host whose heartbeat stops this long → \"stopped reporting\""`
	// TimeoutRepeats: this many timeouts in a row mean the command hangs.
	TimeoutRepeats int `yaml:"timeout_repeats" doc:"repeated command timeouts (a hung zpool) → alert"`
}

var watcherConfig = defineConfig("watcher", watcherSettings{StaleIntervals: 3, SilentAfter: config.Duration(3 * time.Minute), TimeoutRepeats: 3})

func (w watcherSettings) validate(p string, errs *config.Errors) {
	if w.StaleIntervals < 2 || w.StaleIntervals > 100 {
		errs.Add(p+".stale_intervals", w.StaleIntervals, "must be 2 to 100")
	}
	config.CheckMinDuration(errs, p+".silent_after", w.SilentAfter, 30*time.Second)
	if w.TimeoutRepeats < 1 || w.TimeoutRepeats > 100 {
		errs.Add(p+".timeout_repeats", w.TimeoutRepeats, "must be 1 to 100")
	}
}

// SilentAfter is rules.watcher.silent_after: how old a host's heartbeat
// may get before HostSilent says it stopped reporting. The status page and
// zwatch status and check judge a host by it too, so that they agree with
// the alert; the key stays with the rule that owns it rather than in
// config.RulesConfig, which holds only what no rule owns.
func SilentAfter(cfg *config.RulesConfig) time.Duration {
	return watcherConfig.of(cfg).SilentAfter.D()
}

// SetSilentAfter sets rules.watcher.silent_after in cfg, also below the
// least the file may set (tests that cannot wait minutes).
func SetSilentAfter(cfg *config.RulesConfig, d time.Duration) {
	watcherConfig.edit(cfg, func(w *watcherSettings) { w.SilentAfter = config.Duration(d) })
}

// collectorStaleRule is machine-local: a collector runs late because the
// machine running it is busy, which a replay of recorded facts on another
// machine says nothing about.
func collectorStaleRule() Rule {
	return Rule{
		Reads:        []facts.Kind{facts.Heartbeat, facts.CollectorError},
		Eval:         watcherEval(ruleCollectorStale),
		MachineLocal: true,
		Config: []config.RuleSection{
			watcherConfig,
		},
		Alerts: []AlertInfo{{
			Name: nameCollectorStale,
			// zpool list waits while zpool create or import holds the pool
			// lock: a collector a few intervals late is not news, one silent
			// for another minute is (seen on real OpenZFS in make e2e).
			For:        time.Minute,
			Thresholds: watcherConfig.thresholds("stale_intervals"),
			Severity:   "warning",
			Condition: "no fresh message from a collector for `watcher.stale_intervals` ({watcher.stale_intervals}) of its heartbeat interval; " +
				"`for` {for} (zpool list is late while `zpool create`/`import` holds the pool lock)",
		}},
	}
}

func hostSilentRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Heartbeat},
		Eval:  watcherEval(ruleHostSilent),
		Config: []config.RuleSection{
			watcherConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameHostSilent,
			Thresholds: watcherConfig.thresholds("silent_after"),
			Severity:   "critical",
			Condition:  "no heartbeat for `watcher.silent_after` ({watcher.silent_after})",
		}},
	}
}

func commandHangsRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.CollectorError, facts.PoolKstat},
		Eval:  watcherEval(ruleCommandHangs),
		Config: []config.RuleSection{
			watcherConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameCommandHangs,
			Thresholds: watcherConfig.thresholds("timeout_repeats"),
			Severity:   "critical",
			Condition: "a collector's command (or smartctl on one disk) timed out `watcher.timeout_repeats` ({watcher.timeout_repeats}) times in a row, " +
				"or once and confirmed: the killed process has not exited (busy), the kstat says a pool is SUSPENDED, or another zpool command times out too; " +
				"ends after " + fmt.Sprint(hangClearAnswers) + " answers in a row",
		}},
		Memory: []memoryDef{hangsMemory},
	}
}

// hangClearAnswers is how many answers in a row end CommandHangs: one
// answer between two hangs is a flap, not a recovery.
const hangClearAnswers = 2

// blindSpotRule is machine-local: what it reports is which tools this
// machine lacks or may not run.
func blindSpotRule() Rule {
	return Rule{
		Reads:        []facts.Kind{facts.Heartbeat, facts.CollectorError},
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
	if env.Collector == "" || strings.HasSuffix(env.Schema, "."+facts.Heartbeat.Name()) {
		return
	}
	_, known := h.Collectors[env.Collector]
	st := h.collector(env.Collector)
	at := env.CollectedAt
	if st.LastSeen == nil || at.After(*st.LastSeen) {
		st.LastSeen = &at
	}
	hs := h.hangs()
	// An answer after errors or timeouts changes what the rules remember;
	// one more answer from a collector in good health only its time.
	changed := !known || st.TimeoutStreak > 0 || st.ErrKind != "" || st.ErrMessage != "" || st.ErrCommand != "" || st.ErrFix != ""
	if st.TimeoutStreak > 0 {
		hs.Answers[env.Collector] = 0
	}
	if n, ok := hs.Answers[env.Collector]; ok {
		changed = true
		if n+1 >= hangClearAnswers {
			delete(hs.Answers, env.Collector)
		} else {
			hs.Answers[env.Collector] = n + 1
		}
	}
	st.TimeoutStreak, st.ErrKind, st.ErrMessage, st.ErrCommand, st.ErrFix = 0, "", "", "", ""
	if strings.HasSuffix(env.Schema, "."+facts.Smart.Name()) && len(hs.Targets) > 0 {
		// This disk answered; the others' streaks go on.
		if ts := hs.Targets[targetKey(env.Collector, smartDevice(env))]; ts != nil {
			changed = true
			if ts.Streak > 0 {
				ts.Streak, ts.Answers = 0, 0
			}
			ts.Answers++
			if ts.Answers >= hangClearAnswers {
				delete(hs.Targets, targetKey(ts.Collector, ts.Target))
			}
		}
	}
	if changed {
		h.dirty = true
	} else {
		h.touched = true
	}
}

func (e *Engine) noteCollectorError(h *hostState, env bus.Envelope, ce facts.CollectorErrorData) {
	name := ce.Collector
	if name == "" {
		name = env.Collector
	}
	st := h.collector(name)
	st.ErrKind, st.ErrMessage, st.ErrCommand, st.ErrFix = ce.Kind, ce.Message, ce.Command, ce.Fix
	hung := ce.Kind == "timeout" || ce.Kind == "busy"
	switch {
	case ce.Target != "" && hung:
		// One disk's smartctl: its own streak, which other disks' answers
		// do not reset.
		hs := h.hangs()
		k := targetKey(name, ce.Target)
		ts := hs.Targets[k]
		if ts == nil {
			ts = &targetStreak{Collector: name, Target: ce.Target}
			hs.Targets[k] = ts
		}
		ts.Streak++
		ts.Answers = 0
		ts.Kind, ts.Message, ts.Command, ts.Fix, ts.At = ce.Kind, ce.Message, ce.Command, ce.Fix, env.CollectedAt
	case hung:
		st.TimeoutStreak++
		delete(h.hangs().Answers, name)
	}
	h.dirty = true
}

func (e *Engine) noteHeartbeat(h *hostState, env bus.Envelope, hb facts.HeartbeatData) {
	at := env.CollectedAt
	changed := h.Heartbeat == nil
	h.Heartbeat = &at
	for name, ch := range hb.Collectors {
		_, known := h.Collectors[name]
		st := h.collector(name)
		changed = changed || !known || st.Interval != ch.Interval || st.Disabled != ch.Disabled
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
	// The times alone are bookkeeping (touched); a collector new, gone quiet
	// on purpose or polling at another interval changes the rules' view.
	if changed {
		h.dirty = true
	} else {
		h.touched = true
	}
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
	stale := watcherConfig.of(c.cfg).StaleIntervals
	for _, name := range sortedCollectors(c.h) {
		st := c.h.Collectors[name]
		if st.Interval <= 0 || st.Disabled != "" || st.LastSeen == nil {
			continue
		}
		limit := time.Duration(stale) * st.Interval
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
	if age <= watcherConfig.of(c.cfg).SilentAfter.D() {
		return
	}
	c.emit(cond{name: nameHostSilent, severity: alert.Critical,
		labels:   map[string]string{},
		summary:  fmt.Sprintf("%s: zwatch silent for %s", c.h.Host, fmtDur(age)),
		desc:     fmt.Sprintf("No heartbeat from zwatch on %s since %s: it is down, hung, or cannot reach the bus. Nothing on that machine is being watched.", c.h.Host, hb.UTC().Format(time.RFC3339)),
		evidence: map[string]string{"last_heartbeat": hb.UTC().Format(time.RFC3339)}})
}

// nameCommandHangs: a collector's command (or smartctl on one disk) hangs.
// zpool commands hang when a pool is SUSPENDED or a controller died —
// exactly when status cannot say so — so the first timeout does not wait
// for two more when something confirms it: the killed process still has
// not exited (busy: it sits in the kernel), the kernel's kstat says a pool
// is SUSPENDED, or a second zpool command times out too. The zpool
// collectors retry and probe the kstat at their first timeout
// (collectors.HangProbe), so a hang is paged within the command timeout
// and a few seconds. Once raised, it ends only after hangClearAnswers
// answers in a row.
func ruleCommandHangs(c *evalCtx) {
	suspended := c.kstatSuspended()
	hangs := hangsMemory.peek(c.h)
	zpoolHung := 0
	for _, name := range zpoolCollectors {
		if st := c.h.Collectors[name]; st != nil && st.TimeoutStreak > 0 {
			zpoolHung++
		}
	}
	for _, name := range sortedCollectors(c.h) {
		st := c.h.Collectors[name]
		labels := map[string]string{"collector": name}
		zpool := slices.Contains(zpoolCollectors, name)
		confirmed := st.TimeoutStreak > 0 && (st.ErrKind == "busy" || zpool && (suspended || zpoolHung > 1))
		if st.TimeoutStreak < watcherConfig.of(c.cfg).TimeoutRepeats && !confirmed {
			c.keepHang(labels, hangs != nil && hasKey(hangs.Answers, name))
			continue
		}
		summary := fmt.Sprintf("%s: %s hangs", c.h.Host, name)
		switch {
		case zpool:
			summary = fmt.Sprintf("%s: zpool hangs — pool may be SUSPENDED", c.h.Host)
		case strings.HasPrefix(name, "smart"):
			summary = fmt.Sprintf("%s: smartctl hangs — a disk or controller may be dead", c.h.Host)
		}
		desc := fmt.Sprintf("%d run(s) of %s in a row timed out or were still stuck.", st.TimeoutStreak, cmdOr(st.ErrCommand, name))
		switch {
		case st.ErrKind == "busy":
			desc += " The killed process has not exited: it is stuck in the kernel."
		case zpool && suspended:
			desc += " The kernel says a pool is SUSPENDED."
		}
		if st.ErrFix != "" {
			desc += " " + st.ErrFix
		}
		c.emit(cond{name: nameCommandHangs, severity: alert.Critical,
			labels: labels, summary: summary, desc: desc,
			evidence: map[string]string{"timeouts": fmt.Sprint(st.TimeoutStreak), "last_error": st.ErrMessage}})
	}
	if hangs == nil {
		return
	}
	for _, k := range sortedKeys(hangs.Targets) {
		ts := hangs.Targets[k]
		labels := map[string]string{"collector": ts.Collector, "device": ts.Target}
		if c.targetGone(ts) {
			delete(hangs.Targets, k)
			c.h.dirty = true
			continue
		}
		if ts.Streak < watcherConfig.of(c.cfg).TimeoutRepeats && !(ts.Streak > 0 && ts.Kind == "busy") {
			c.keepHang(labels, ts.Streak == 0)
			continue
		}
		desc := fmt.Sprintf("%d run(s) of %s in a row timed out or were still stuck; the other disks answer.", ts.Streak, cmdOr(ts.Command, ts.Collector))
		if ts.Fix != "" {
			desc += " " + ts.Fix
		}
		c.emit(cond{name: nameCommandHangs, severity: alert.Critical, labels: labels,
			summary:  fmt.Sprintf("%s: smartctl hangs on %s — the disk or its controller may be dying", c.h.Host, ts.Target),
			desc:     desc,
			evidence: map[string]string{"timeouts": fmt.Sprint(ts.Streak), "last_error": ts.Message, "device": ts.Target}})
	}
}

// keepHang keeps a raised CommandHangs while its command has answered
// fewer than hangClearAnswers times since (answering says so): it resolves
// on a steady answer, not on one between two hangs.
func (c *evalCtx) keepHang(labels map[string]string, answering bool) {
	if !answering {
		return
	}
	t := c.previous(nameCommandHangs, labels)
	if t == nil || t.A.State != alert.Firing {
		return
	}
	ev := copyMap(t.A.Evidence)
	ev["answering"] = "true"
	c.emit(cond{name: nameCommandHangs, severity: t.A.Severity, labels: labels,
		summary: t.A.Summary, desc: t.A.Description, evidence: ev})
}

// targetGone: a disk whose errors stopped without it answering (it left
// the machine) is forgotten after three SMART intervals.
func (c *evalCtx) targetGone(ts *targetStreak) bool {
	limit := 3 * time.Hour
	if st := c.h.Collectors[ts.Collector]; st != nil && st.Interval > 0 {
		limit = 3 * st.Interval
	}
	return c.now.Sub(ts.At) > limit
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
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
		kind := st.ErrKind
		if st.Disabled != "" {
			kind = "disabled" // its tool is missing: the collector never ran
		}
		c.emit(cond{name: nameBlindSpot, severity: alert.Warning,
			labels:   map[string]string{"collector": name},
			summary:  fmt.Sprintf("%s: monitoring blind spot — %s is not running", c.h.Host, name),
			desc:     fmt.Sprintf("zwatch cannot run the %s collector on %s: %s", name, c.h.Host, why),
			evidence: map[string]string{"kind": kind}})
	}
}

func cmdOr(cmd, name string) string {
	if cmd != "" {
		return "`" + cmd + "`"
	}
	return name
}
