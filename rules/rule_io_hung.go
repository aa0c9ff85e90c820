package rules

import (
	"fmt"
	"strconv"
	"time"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/zfs"
)

func ioHungRule() Rule {
	return Rule{
		Reads: []string{facts.KindZpoolEvent},
		Eval:  poolsEval(ruleIOHung),
		Alerts: []AlertInfo{{
			Name:       nameIOHung,
			Thresholds: []Threshold{{"slow_io.clear", "6h"}},
			Severity:   "critical",
			Condition: "an `ereport.fs.zfs.deadman` event: an I/O has not completed for `zfs_deadman_ziotime_ms` (5 min by default); " +
				"resolves after `slow_io.clear` ({slow_io.clear}) without one",
			AtOnce: true,
		}},
	}
}

// hungPool is what the deadman events of one pool said.
type hungPool struct {
	// Since is when the oldest hung I/O was issued, as far as the events
	// tell; Last is the newest deadman event, Events how many came.
	Since  time.Time `json:"since"`
	Last   time.Time `json:"last"`
	Events uint64    `json:"events"`
	// Vdev is the device path of the newest event that named one.
	Vdev string `json:"vdev,omitempty"`
	// Exact: Since was read from the event (its ENA's time and
	// zio_timestamp), not taken as the first event's time.
	Exact bool `json:"exact,omitempty"`
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
		hp = &hungPool{Since: at}
		st.Hung[ev.Pool] = hp
	}
	if issued, ok := deadmanIssued(ev, at); ok && (!hp.Exact || issued.Before(hp.Since)) {
		hp.Since, hp.Exact = issued, true
	}
	if at.After(hp.Last) {
		hp.Last = at
	}
	hp.Events++
	if ev.VdevPath != "" {
		hp.Vdev = ev.VdevPath
	}
	h.dirty = true
}

// enaTimeBits: an ENA of format 1 keeps the low 44 bits of gethrtime()
// (ns since boot) above bit 20 (include/sys/fm/protocol.h); so does the
// age computed from it, which holds for hangs shorter than 4.8 hours.
const enaTimeBits = 44

// deadmanIssued is when the hung I/O of a deadman event was issued: its
// ena holds the kernel's clock when the ereport was made and zio_timestamp
// the same clock when the I/O was issued, so their difference is its age.
// ok is false when either is missing or the ENA is not of format 1.
func deadmanIssued(ev *zfs.Event, at time.Time) (time.Time, bool) {
	ena, ok1 := eventUint(ev.Fields["ena"])
	issued, ok2 := eventUint(ev.Fields["zio_timestamp"])
	if !ok1 || !ok2 || issued == 0 || ena&3 != 1 {
		return time.Time{}, false
	}
	const mask = 1<<enaTimeBits - 1
	made := ena >> 20 & mask
	age := time.Duration((made - issued&mask) & mask)
	if age <= 0 || age > 4*time.Hour {
		return time.Time{}, false // wrapped past what the ENA can tell
	}
	return at.Add(-age), true
}

// nameIOHung: ZFS's deadman found an I/O that has not completed for
// zfs_deadman_ziotime_ms. With failmode=wait (the default) every writer to
// the pool blocks; the device named is the one that stopped answering.
func ruleIOHung(c *evalCtx) {
	st := c.h.SlowIO
	if st == nil {
		return
	}
	clearAfter := c.cfg.SlowIO.Clear.D()
	for _, pool := range sortedKeys(st.Hung) {
		hp := st.Hung[pool]
		if c.now.Sub(hp.Last) >= clearAfter {
			delete(st.Hung, pool)
			c.h.dirty = true
			continue
		}
		hung := hp.Last.Sub(hp.Since).Round(time.Second)
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
			desc: fmt.Sprintf("ZFS's deadman found I/O to %s%s that has not completed %s. With failmode=wait (the default) every program writing to the pool waits. "+
				"The device most likely stopped answering: check the kernel log for resets and timeouts and its SMART data; if the pool is redundant, "+
				"`zpool offline %s DEVICE` or pulling the disk lets it go on. `zpool events -v %s` shows the deadman events.",
				pool, what, howLong, shellWord(pool), shellWord(pool)),
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
