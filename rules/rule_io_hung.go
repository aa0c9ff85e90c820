package rules

import (
	"fmt"
	"strconv"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

func ioHungRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolEvent},
		Eval:  poolsEval(ruleIOHung),
		Config: []config.RuleSection{
			slowIOConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameIOHung,
			Thresholds: slowIOConfig.thresholds("clear"),
			Severity:   "critical",
			Condition: "an `ereport.fs.zfs.deadman` event: an I/O has not completed for `zfs_deadman_ziotime_ms` (5 min by default); " +
				"resolves after `slow_io.clear` ({slow_io.clear}) without one",
			AtOnce: true,
		}},
		Memory: []memoryDef{slowIOMemory},
	}
}

// hungPool is what the deadman events of one pool said.
type hungPool struct {
	// First and Last are the first and newest deadman events of this hang,
	// Events how many came.
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
	Events uint64    `json:"events"`
	// For is how long the I/O of the newest event had been outstanding
	// when it was posted; Exact says it was read from the event's clocks
	// (kernelClock), else it is the time since the first event.
	For   time.Duration `json:"for_ns"`
	Exact bool          `json:"exact,omitempty"`
	// Vdev is the device path of the newest event that named one.
	Vdev string `json:"vdev,omitempty"`
}

// maxHungPools bounds the pools remembered per host.
const maxHungPools = 256

// noteDeadman takes an ereport.fs.zfs.deadman event. A hang that went
// quiet for slow_io.clear and comes back is a new hang.
func noteDeadman(h *hostState, ev *zfs.Event, clearAfter time.Duration, now time.Time) {
	if ev.Pool == "" {
		return
	}
	st := h.slowIO()
	at := ev.Time
	if at.IsZero() {
		at = now
	}
	hp := st.Hung[ev.Pool]
	if hp != nil && at.Sub(hp.Last) >= clearAfter {
		hp = nil
	}
	if hp == nil {
		if len(st.Hung) >= maxHungPools {
			return
		}
		hp = &hungPool{First: at}
		st.Hung[ev.Pool] = hp
	}
	if !at.Before(hp.Last) {
		hp.Last = at
		if age, ok := st.Clock.ioAge(ev); ok {
			hp.For, hp.Exact = age, true
		} else if !hp.Exact {
			hp.For = hp.Last.Sub(hp.First)
		}
		if ev.VdevPath != "" {
			hp.Vdev = ev.VdevPath
		}
	}
	hp.Events++
	h.dirty = true
}

// kernelClock ties the kernel's gethrtime() (ns since boot) to the wall
// clock, from the ereports' own fields: an ENA of format 1 keeps the low
// 44 bits of gethrtime() when it was made (include/sys/fm/protocol.h), and
// the event's time is the wall clock then. An ENA is made at the first
// ereport of its logical I/O and reused by later ones, so the smallest
// wall-minus-hrtime seen is the boot time (modulo 2^44 ns, 4.9 hours).
// With it, zio_timestamp (gethrtime() when the I/O was issued) says how
// long a hung I/O has been outstanding when its deadman event was posted.
type kernelClock struct {
	// Boot is the wall clock of hrtime 0, in ns modulo 2^44, learned from
	// the event of time At.
	Boot  uint64    `json:"boot,omitempty"`
	Known bool      `json:"known,omitempty"`
	At    time.Time `json:"at,omitempty"`
}

// relearnAfter: a boot time learned longer ago than this gives way to any
// new reading, so a reboot (a later boot time, which looks like a reused
// ENA) misleads for an hour at most.
const relearnAfter = time.Hour

const (
	enaTimeBits  = 44
	enaTimeMask  = 1<<enaTimeBits - 1
	enaTimeShift = 20
)

// learn takes the ENA and time of any ereport.
func (k *kernelClock) learn(ev *zfs.Event) bool {
	ena, ok := eventUint(ev.Fields["ena"])
	if !ok || ena&3 != 1 || ev.Time.IsZero() {
		return false // not format 1, or no time
	}
	boot := (uint64(ev.Time.UnixNano()) - ena>>enaTimeShift) & enaTimeMask
	// A later (reused) ENA gives a later boot; earlier means fresher, the
	// comparison being circular modulo 2^44.
	fresher := (boot-k.Boot)&enaTimeMask > enaTimeMask/2
	if !k.Known || fresher || ev.Time.Sub(k.At) > relearnAfter {
		k.Boot, k.Known, k.At = boot, true, ev.Time
		return true
	}
	return false
}

// ioAge is how long the I/O of ev had been outstanding when ev was posted.
func (k *kernelClock) ioAge(ev *zfs.Event) (time.Duration, bool) {
	issued, ok := eventUint(ev.Fields["zio_timestamp"])
	if !k.Known || !ok || issued == 0 || ev.Time.IsZero() {
		return 0, false
	}
	age := time.Duration((uint64(ev.Time.UnixNano()) - k.Boot - issued) & enaTimeMask)
	if age <= 0 || age > 4*time.Hour {
		return 0, false // past what 44 bits tell
	}
	return age, true
}

// nameIOHung: ZFS's deadman found an I/O that has not completed for
// zfs_deadman_ziotime_ms. With failmode=wait (the default) every writer to
// the pool blocks; the device named is the one that stopped answering.
func ruleIOHung(c *evalCtx) {
	st := slowIOMemory.peek(c.h)
	if st == nil {
		return
	}
	clearAfter := slowIOConfig.of(c.cfg).Clear.D()
	for _, pool := range sortedKeys(st.Hung) {
		hp := st.Hung[pool]
		if c.now.Sub(hp.Last) >= clearAfter {
			delete(st.Hung, pool)
			c.h.dirty = true
			continue
		}
		hung := hp.For.Round(time.Second)
		howLong := fmt.Sprintf("for %d s", int64(hung.Seconds()))
		if !hp.Exact {
			howLong = fmt.Sprintf("for longer than zfs_deadman_ziotime_ms (5 min by default) and %d s since the first deadman event", int64(hung.Seconds()))
		}
		ev := map[string]string{
			"deadman_events": itoa(hp.Events), "last_event": hp.Last.UTC().Format(time.RFC3339),
			"hung_seconds": strconv.FormatInt(int64(hung.Seconds()), 10),
		}
		labels := map[string]string{"pool": pool}
		what := ""
		serial := ""
		if hp.Vdev != "" {
			ev["vdev"] = hp.Vdev
			serial = c.h.serialOf(&zfs.Vdev{Path: hp.Vdev, Name: hp.Vdev})
			what = " (" + diskName(trimDev(hp.Vdev), serial) + ")"
		}
		c.emit(cond{
			name: nameIOHung, severity: alert.Critical, pool: pool, serial: serial, labels: labels,
			summary: fmt.Sprintf("I/O to pool %s has not completed %s%s", pool, howLong, what),
			desc: fmt.Sprintf("ZFS's deadman found I/O to %s%s that has not completed %s. With zfs_deadman_failmode=wait (the default) it and every program writing behind it keep waiting. "+
				"The device most likely stopped answering: check the kernel log for resets and timeouts, and its SMART data. If the pool is redundant, "+
				"pulling the disk (or powering off its slot, as ZED's deadman-slot_off does) fails the hung I/O and the pool goes on without it. `zpool events -v %s` shows the deadman events.",
				pool, what, howLong, shellWord(pool)),
			evidence: ev,
		})
	}
}

// trimDev is a device path as people say it.
func trimDev(p string) string {
	if len(p) > 5 && p[:5] == "/dev/" {
		return p[5:]
	}
	return p
}
