package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

func poolStateRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus},
		Eval:  poolEval(rulePoolState),
		Alerts: []AlertInfo{{
			Name:      namePoolState,
			Severity:  "warning (DEGRADED) / critical",
			Condition: "pool not ONLINE; while `zpool status` cannot answer (timeout, error, silent), from the health column of `zpool list`",
		}},
	}
}

// poolDown: the PoolState alert of a FAULTED, UNAVAIL or SUSPENDED pool
// carries the alerts about its parts (its summary lists the devices that
// took it down), so they do not page one by one. The rules about parts of a
// pool name it in InhibitedBy.
func poolDown() InhibitRule {
	return InhibitRule{
		Source: Matcher{Names: []string{namePoolState},
			Labels: []LabelMatch{{Name: "state", Values: []string{zfs.StateFaulted, zfs.StateUnavail, zfs.StateSuspended}}}},
		Equal: []string{"pool"},
	}
}

func poolStatusMessageRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus},
		Eval:  poolEval(rulePoolStatusMessage),
		Alerts: []AlertInfo{{
			Name: namePoolStatusMessage,
			// Its "unrecoverable error" text comes with the error counts,
			// and waits with them (errorsSettle).
			For:         errorsSettle,
			Severity:    "warning / info (features, upgrade)",
			Condition:   "ONLINE but zpool prints a status or msgid (e.g. ZFS-8000-9P); `for` {for}",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

// namePoolState: a pool that is not ONLINE. DEGRADED still serves every
// block (warning; the redundancy rule says how close to the edge it is);
// FAULTED, UNAVAIL and SUSPENDED pools have stopped serving data (critical),
// and their alert carries the devices that took them down, so those devices
// do not page one by one (see inhibit).
func rulePoolState(c *evalCtx, p *zfs.Pool) {
	if p.State == zfs.StateOnline || p.State == "" {
		return
	}
	sev := alert.Critical
	if p.State == zfs.StateDegraded {
		sev = alert.Warning
	}
	bad := badLeaves(p)
	summary := fmt.Sprintf("pool %s is %s", p.Name, p.State)
	if len(bad) > 0 {
		summary += ": " + strings.Join(bad, ", ")
	}
	c.emit(cond{
		name: namePoolState, severity: sev, pool: p.Name,
		labels:   map[string]string{"pool": p.Name, "state": p.State},
		summary:  summary,
		desc:     poolText(p),
		evidence: poolEvidence(p),
	})
}

// namePoolStatusMessage: zpool prints status/see lines while ONLINE for
// errors it already corrected (ZFS-8000-9P) or for a pool that is merely
// behind on features. The first is worth a look; the second is information.
func rulePoolStatusMessage(c *evalCtx, p *zfs.Pool) {
	if p.State != zfs.StateOnline || (p.MsgID == "" && strings.TrimSpace(p.Status) == "") || routineResilver(p) {
		return
	}
	sev := alert.Warning
	low := strings.ToLower(p.Status)
	if p.MsgID == "" && (strings.Contains(low, "feature") || strings.Contains(low, "upgrade") || strings.Contains(low, "legacy on-disk format")) {
		sev = alert.Info
	}
	id := p.MsgID
	if id == "" {
		id = "status"
	}
	first := strings.TrimSpace(p.Status)
	if i := strings.Index(first, "."); i > 0 {
		first = first[:i+1]
	}
	c.emit(cond{
		name: namePoolStatusMessage, severity: sev, pool: p.Name,
		labels:   map[string]string{"pool": p.Name, "msgid": id},
		summary:  fmt.Sprintf("pool %s: %s", p.Name, oneLine(first)),
		desc:     poolText(p),
		evidence: poolEvidence(p),
	})
}

// badLeaves names the leaves that are not ONLINE (spares aside), "sdc UNAVAIL".
func badLeaves(p *zfs.Pool) []string {
	var out []string
	for _, cv := range p.AllVdevs() {
		if cv.Class == "spares" {
			continue
		}
		for _, l := range cv.Vdev.Leaves() {
			if l.State != zfs.StateOnline && l.Type != zfs.VdevDSpare {
				out = append(out, vdevID(l)+" "+l.State)
			}
		}
	}
	return out
}

func poolText(p *zfs.Pool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pool %s state %s", p.Name, p.State)
	if s := strings.TrimSpace(p.Status); s != "" {
		fmt.Fprintf(&b, "\nstatus: %s", oneLine(s))
	}
	if s := strings.TrimSpace(p.Action); s != "" {
		fmt.Fprintf(&b, "\naction: %s", oneLine(s))
	}
	if p.MsgID != "" {
		fmt.Fprintf(&b, "\nsee: https://openzfs.github.io/openzfs-docs/msg/%s", p.MsgID)
	}
	return b.String()
}

func poolEvidence(p *zfs.Pool) map[string]string {
	ev := map[string]string{"pool_state": p.State}
	if p.MsgID != "" {
		ev["msgid"] = p.MsgID
	}
	if bad := badLeaves(p); len(bad) > 0 {
		ev["devices"] = strings.Join(bad, ", ")
	}
	if p.Scan.Text != "" {
		ev["scan"] = oneLine(p.Scan.Text)
	}
	return ev
}

// oneLine folds the continuation lines zpool wraps text into.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// vdevID names a leaf stably: a device that went missing is shown by GUID
// with "was /dev/gpt/usb2", and should stay the same alert as "gpt/usb2".
func vdevID(v *zfs.Vdev) string {
	if v.Was != "" {
		return strings.TrimPrefix(v.Was, "/dev/")
	}
	return strings.TrimPrefix(v.Name, "/dev/")
}

// statusCannotAnswer reports whether zpool status has failed since its last
// answer (a timeout, a hang, any error) or has gone silent for three of its
// intervals: its last pools are then no news, and zpool list speaks for it.
func statusCannotAnswer(c *evalCtx) (bool, string) {
	st := c.h.Collectors["zpool_status"]
	if st == nil {
		return false, ""
	}
	if st.TimeoutStreak > 0 || st.ErrKind != "" {
		return true, cmdOr(st.ErrCommand, "zpool status") + ": " + strutil.FirstNonEmpty(st.ErrKind, "failed")
	}
	if st.Interval > 0 && st.LastSeen != nil && c.now.Sub(c.sinceRef(*st.LastSeen)) > 3*st.Interval {
		return true, fmt.Sprintf("no answer from zpool status for %s", fmtDur(c.now.Sub(*st.LastSeen)))
	}
	return false, ""
}

// rulePoolStateFromList raises PoolState from the health column of zpool
// list while zpool status cannot answer: a pool that went DEGRADED while
// status hung is still paged. It is the same alert (labels pool and state)
// as the one status raises, so status answering again takes it over
// without a second page. SUSPENDED is PoolSuspended's.
func rulePoolStateFromList(c *evalCtx) {
	if c.h.capacity == nil {
		return
	}
	down, why := statusCannotAnswer(c)
	if !down {
		handOverToStatus(c.h)
		return
	}
	for _, p := range c.h.capacity.pools {
		if p.Health == zfs.StateOnline || p.Health == "" || p.Health == zfs.StateSuspended {
			continue
		}
		sev := alert.Critical
		if p.Health == zfs.StateDegraded {
			sev = alert.Warning
		}
		c.emit(cond{
			name: namePoolState, severity: sev, pool: p.Name,
			labels:  map[string]string{"pool": p.Name, "state": p.Health},
			summary: fmt.Sprintf("pool %s is %s (zpool list; zpool status does not answer)", p.Name, p.Health),
			desc: fmt.Sprintf("zpool list says pool %s is %s, and zpool status, which names the devices, cannot answer (%s). Run `zpool status -x %s` on the machine.",
				p.Name, p.Health, why, shellWord(p.Name)),
			evidence: map[string]string{"pool_state": p.Health, "source": "zpool list", "status": why},
		})
	}
}

// handOverToStatus gives the alerts zpool list raised while status could
// not answer to the status scope once it answers again: status judges them
// from then on, keeping the alert of a pool that was exported meanwhile.
// Left to the list, a zpool list from before the export resolved it (a
// false all-clear, make e2e).
func handOverToStatus(h *hostState) {
	for _, t := range h.Alerts {
		if t.Scope == scopeWatcher && t.A.Name == namePoolState && t.A.State != alert.Resolved {
			t.Scope = scopeStatus
			h.dirty = true
		}
	}
}
