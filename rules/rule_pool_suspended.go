package rules

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// namePoolSuspended: ZFS stopped all I/O to a pool (a device it needs is gone
// and failmode is wait or continue).
const namePoolSuspended = "PoolSuspended"

// zpoolCollectors are the collectors that run zpool, and so hang with a
// suspended pool.
var zpoolCollectors = []string{"zpool_status", "zpool_list", "zpool_events"}

func poolSuspendedRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.PoolKstat, facts.ZpoolStatus, facts.ZpoolCapacity, facts.CollectorError},
		Eval:  watcherEval(ruleHostPools),
		Alerts: []AlertInfo{{
			Name:     namePoolSuspended,
			Severity: "critical",
			// The pages before it (write errors while ZFS still retried)
			// told of a failing disk; this one says all I/O stopped.
			AtOnce: true,
			Condition: "the kernel's kstat (`/proc/spl/kstat/zfs/<pool>/state`; FreeBSD `kstat.zfs.<pool>.misc.state`), `zpool status` or `zpool list` says SUSPENDED; " +
				"read every list interval and at once when a zpool command times out. It carries the pool's data-error and device alerts and the zpool `CommandHangs`",
			Inhibits: []InhibitRule{
				{Target: Matcher{Names: []string{namePoolState, namePoolStatusMessage, nameVdevState, nameRedundancy, nameVdevErrors,
					nameVdevErrorRate, namePoolDataErrors, nameDiskIncident, nameResilver, nameResilverAtRisk, nameScrubErrors}},
					Equal: []string{"pool"}},
				// A hung zpool is what a suspended pool does: the one page says why.
				{Target: Matcher{Names: []string{nameCommandHangs, nameCollectorStale},
					Labels: []LabelMatch{{Name: "collector", Values: zpoolCollectors}}}},
			},
		}},
		Memory: []memoryDef{hangsMemory},
	}
}

// hangState is what the hang rules remember of one host: PoolSuspended
// the kernel's pool states, CommandHangs the timeout streaks and answers.
// One memory for both, as the collectors' bookkeeping (rule_watcher.go)
// and PoolSuspended's kstat both say whether a command hangs.
type hangState struct {
	// Kstat is the newest kernel reading of each pool's state, at KstatAt.
	Kstat   map[string]string `json:"kstat,omitempty"`
	KstatAt *time.Time        `json:"kstat_at,omitempty"`
	// Targets are the timeout streaks of one collector on one target (a
	// disk's smartctl), by targetKey: another disk's answer is no answer
	// from this one.
	Targets map[string]*targetStreak `json:"targets,omitempty"`
	// Answers counts each collector's answers since its last timeout, for
	// the end of CommandHangs (hangClearAnswers).
	Answers map[string]int `json:"answers,omitempty"`
}

// targetStreak is one collector's timeouts on one target.
type targetStreak struct {
	Collector string    `json:"collector"`
	Target    string    `json:"target"`
	Streak    int       `json:"streak,omitempty"`
	Answers   int       `json:"answers,omitempty"`
	Kind      string    `json:"kind,omitempty"`
	Message   string    `json:"message,omitempty"`
	Command   string    `json:"command,omitempty"`
	Fix       string    `json:"fix,omitempty"`
	At        time.Time `json:"at"`
}

func targetKey(collector, target string) string { return collector + " " + target }

// hangsMemory: version 0 (41d2458's hangs) has the same shape.
var hangsMemory = remember("hangs", 1, sameShape[hangState])

// hangs is the host's hang memory, ready to write to.
func (h *hostState) hangs() *hangState {
	hs := hangsMemory.of(h)
	if hs.Targets == nil {
		hs.Targets = map[string]*targetStreak{}
	}
	if hs.Answers == nil {
		hs.Answers = map[string]int{}
	}
	return hs
}

func observeKstat(o observation, env bus.Envelope, d *facts.PoolKstatData) error {
	h := o.h
	hs := h.hangs()
	if hs.KstatAt != nil && env.CollectedAt.Before(*hs.KstatAt) {
		return nil // an older reading than the one applied
	}
	hs.Kstat = make(map[string]string, len(d.Pools))
	for _, p := range d.Pools {
		hs.Kstat[p.Name] = p.State
	}
	at := env.CollectedAt
	hs.KstatAt = &at
	h.dirty = true
	return nil
}

// kstatFresh returns the kernel's pool states when the reading is recent
// enough to trust (three of its intervals, at least a minute), else nil.
func (c *evalCtx) kstatFresh() map[string]string {
	hs := hangsMemory.peek(c.h)
	if hs == nil || hs.KstatAt == nil {
		return nil
	}
	limit := time.Minute
	if st := c.h.Collectors["pool_kstat"]; st != nil && 3*st.Interval > limit {
		limit = 3 * st.Interval
	}
	if c.now.Sub(*hs.KstatAt) > limit {
		return nil
	}
	return hs.Kstat
}

// kstatSuspended reports whether a fresh kstat reading has a SUSPENDED pool.
func (c *evalCtx) kstatSuspended() bool {
	for _, s := range c.kstatFresh() {
		if s == zfs.StateSuspended {
			return true
		}
	}
	return false
}

// ruleHostPools judges the pools from what still answers when zpool
// status does not: the kernel's kstat and zpool list.
func ruleHostPools(c *evalCtx) {
	rulePoolSuspended(c)
	rulePoolStateFromList(c)
}

// rulePoolSuspended: a pool whose I/O ZFS has stopped. Any source saying
// SUSPENDED raises it: the kstat first (it never waits on the pool, so it
// says so while zpool hangs), zpool status and zpool list once they answer.
// It ends only when all of them say otherwise: a zpool status from before
// the `zpool clear` still saying SUSPENDED would otherwise page PoolState
// SUSPENDED, which this alert carried, the moment this one ended.
func rulePoolSuspended(c *evalCtx) {
	from := map[string]string{}
	if c.h.capacity != nil {
		for _, p := range c.h.capacity.pools {
			if p.Health == zfs.StateSuspended {
				from[p.Name] = "zpool list"
			}
		}
	}
	for _, p := range c.h.pools {
		if p != nil && p.State == zfs.StateSuspended {
			from[p.Name] = "zpool status"
		}
	}
	for pool, s := range c.kstatFresh() {
		if s == zfs.StateSuspended {
			from[pool] = "kstat"
		}
	}
	pools := make([]string, 0, len(from))
	for p := range from {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	for _, pool := range pools {
		devices := suspendedDevices(c.h.pools, pool)
		summary := fmt.Sprintf("pool %s is SUSPENDED: ZFS stopped all I/O to it", pool)
		if len(devices) > 0 {
			summary += " (" + strings.Join(devices, ", ") + ")"
		}
		q := shellWord(pool)
		desc := fmt.Sprintf("A device pool %s needs is gone, so ZFS suspended the pool: reads and writes wait (failmode=wait) or fail (failmode=continue), and zpool commands may hang. "+
			"Nothing is lost yet that was written before. Reconnect the device (cable, power, enclosure; `dmesg` shows what dropped), then run `zpool clear %s` to resume I/O, "+
			"and check `zpool status -v %s` afterwards: it lists any file whose last writes did not reach the disk.", pool, q, q)
		ev := map[string]string{"source": from[pool], "pool_state": zfs.StateSuspended}
		if len(devices) > 0 {
			ev["devices"] = strings.Join(devices, ", ")
		}
		c.emit(cond{name: namePoolSuspended, severity: alert.Critical, pool: pool,
			labels:  map[string]string{"pool": pool},
			summary: summary, desc: desc, evidence: ev})
	}
}

// suspendedDevices names the leaves of pool that failed I/O or are not
// ONLINE in the last zpool status: the ones to reconnect. A pulled disk of a
// single-disk pool still shows ONLINE there, with its write errors.
func suspendedDevices(pools []*zfs.Pool, pool string) []string {
	var out []string
	for _, p := range pools {
		if p == nil || p.Name != pool {
			continue
		}
		for _, cv := range p.AllVdevs() {
			for _, l := range cv.Vdev.Leaves() {
				if l.State != zfs.StateOnline || l.ReadErrors+l.WriteErrors > 0 {
					out = append(out, vdevID(l))
				}
			}
		}
	}
	return out
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// smartDevice reads the device of a SMART report, for the per-disk
// timeout streaks.
func smartDevice(env bus.Envelope) string {
	var d struct {
		Device string `json:"device"`
	}
	if json.Unmarshal(env.Data, &d) != nil {
		return ""
	}
	return d.Device
}
