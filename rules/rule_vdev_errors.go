package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// errorsSettle is how long error counts wait before they page: long enough
// for the state change that explains them (REMOVED, SUSPENDED: 2-3 s after
// the first errors in make e2e) to arrive and carry them.
const errorsSettle = 10 * time.Second

// errorSettings are rules.errors: READ/WRITE/CKSUM counters. SmartCRC
// holds its alert for Hold too.
type errorSettings struct {
	// Hold keeps a "new errors" alert firing this long after the last increase.
	Hold config.Duration `yaml:"hold" doc:"how long a READ/WRITE/CKSUM increase keeps its alert firing"`
	// RateCount errors within RateWindow on one vdev is critical, as ZED's
	// diagnosis engine would fault the device (its default: 10 in 10 minutes).
	RateCount  int             `yaml:"rate_count" doc:"this many errors on one vdev ..."`
	RateWindow config.Duration `yaml:"rate_window" doc:"... within this window is critical (like ZED's diagnosis engine)"`
}

var errorsConfig = defineConfig("errors", errorSettings{
	Hold: config.Duration(24 * time.Hour), RateCount: 10, RateWindow: config.Duration(10 * time.Minute),
})

func (e errorSettings) validate(p string, errs *config.Errors) {
	config.CheckMinDuration(errs, p+".hold", e.Hold, time.Minute)
	if e.RateCount < 1 {
		errs.Add(p+".rate_count", e.RateCount, "must be at least 1")
	}
	config.CheckMinDuration(errs, p+".rate_window", e.RateWindow, time.Minute)
}

func vdevErrorsRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus},
		Eval:  poolEval(ruleVdevErrors),
		Config: []config.RuleSection{
			errorsConfig,
		},
		Alerts: []AlertInfo{{
			Name: nameVdevErrors,
			// A disk that drops out shows I/O errors for a second or two
			// before ZFS marks it REMOVED (or suspends its pool): the state
			// change, not the counters, is the page then.
			For:         errorsSettle,
			Thresholds:  errorsConfig.thresholds("hold"),
			Severity:    "warning",
			Condition:   "READ/WRITE/CKSUM rose; holds `errors.hold` ({errors.hold}) after the last rise; ends when counters are cleared; `for` {for}",
			InhibitedBy: []InhibitRule{poolDown()},
		}, {
			Name:        nameVdevErrorRate,
			For:         errorsSettle,
			Thresholds:  errorsConfig.thresholds("rate_count", "rate_window"),
			Severity:    "critical",
			Condition:   "≥ `errors.rate_count` ({errors.rate_count}) errors in `errors.rate_window` ({errors.rate_window}) on one device, like ZED; `for` {for}",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
		Memory: []memoryDef{vdevErrorsMemory},
	}
}

// vdevErrors is what VdevErrors and VdevErrorRate remember of a host: each
// leaf's error counters, by pool + "/" + vdevID.
type vdevErrors struct {
	Leaves map[string]*vdevCounters `json:"leaves,omitempty"`
}

// vdevErrorsMemory: version 0 is 41d2458's counters, the map alone.
var vdevErrorsMemory = remember("vdev_errors", 1, intoField(func(m *vdevErrors) *map[string]*vdevCounters { return &m.Leaves }))

// vdevCounters remembers a vdev's error counters between observations.
type vdevCounters struct {
	Read  uint64 `json:"r"`
	Write uint64 `json:"w"`
	Cksum uint64 `json:"c"`
	// Total is every increase ever seen: it only grows, and drives re-sending.
	Total        uint64    `json:"total"`
	LastIncrease time.Time `json:"last_increase,omitempty"`
	// Recent increases, newest last, for the error-rate rule.
	Recent []rateEntry `json:"recent,omitempty"`
}

type rateEntry struct {
	T int64  `json:"t"` // unix seconds
	N uint64 `json:"n"`
}

// countErrors updates the remembered READ/WRITE/CKSUM counters of leaf l and
// returns the increase since the last observation. Counters only fall when
// `zpool clear` (or an export) reset them: that is no increase, though what
// the counter shows after the reset is new. A vdev seen for the first time
// has its counters counted in full: nobody has been told about them.
func countErrors(h *hostState, key string, l *zfs.Vdev, now time.Time) (inc uint64, vc *vdevCounters) {
	mem := vdevErrorsMemory.of(h)
	if mem.Leaves == nil {
		mem.Leaves = map[string]*vdevCounters{}
	}
	vc = mem.Leaves[key]
	first := vc == nil
	if first {
		vc = &vdevCounters{}
		mem.Leaves[key] = vc
	}
	step := func(prev, cur uint64) uint64 {
		if cur >= prev {
			return cur - prev
		}
		return cur
	}
	inc = step(vc.Read, l.ReadErrors) + step(vc.Write, l.WriteErrors) + step(vc.Cksum, l.ChecksumErrors)
	if inc > 0 || first || vc.Read != l.ReadErrors || vc.Write != l.WriteErrors || vc.Cksum != l.ChecksumErrors {
		h.dirty = true
	}
	vc.Read, vc.Write, vc.Cksum = l.ReadErrors, l.WriteErrors, l.ChecksumErrors
	if inc > 0 {
		vc.Total += inc
		vc.LastIncrease = now
		vc.Recent = append(vc.Recent, rateEntry{T: now.Unix(), N: inc})
		if len(vc.Recent) > maxRateEntries {
			vc.Recent = vc.Recent[len(vc.Recent)-maxRateEntries:]
		}
	}
	return inc, vc
}

// nameVdevErrors: READ/WRITE/CKSUM counters of a device went up. The alert
// stays while the counters are not cleared and the last increase is younger
// than rules.errors.hold; it is sent again when the total of new errors
// reaches the next power of ten (10, 100, …), not on every rise. Alongside,
// VdevErrorRate mirrors ZED's diagnosis engine: rules.errors.rate_count
// errors within rules.errors.rate_window on one device is critical.
func ruleVdevErrors(c *evalCtx, p *zfs.Pool) {
	cfg := errorsConfig.of(c.cfg)
	present := map[string]bool{}
	for _, cv := range p.AllVdevs() {
		for _, l := range cv.Vdev.Leaves() {
			if l.Type == zfs.VdevDSpare {
				continue
			}
			key := p.Name + "/" + vdevID(l)
			present[key] = true
			_, vc := countErrors(c.h, key, l, c.now)
			cur := l.ReadErrors + l.WriteErrors + l.ChecksumErrors
			if vc.Total == 0 || cur == 0 {
				continue
			}
			serial := c.h.serialOf(l)
			repl := replacementFor(c, p, cv.Vdev, l, serial)
			if left, _, ok := margin(cv.Vdev); ok {
				repl.Margin = &left
			}
			labels := map[string]string{"pool": p.Name, "vdev": vdevID(l)}
			what := diskName(vdevID(l), serial)
			ev := map[string]string{
				"read": itoa(l.ReadErrors), "write": itoa(l.WriteErrors), "cksum": itoa(l.ChecksumErrors),
				"top_vdev": cv.Vdev.Name, "state": l.State,
			}
			if l.ErrorsApproximate {
				ev["approximate"] = "true"
			}
			if c.now.Sub(vc.LastIncrease) < cfg.Hold.D() {
				c.emit(cond{
					name: nameVdevErrors, severity: alert.Warning, pool: p.Name, serial: serial, count: vc.Total,
					labels:  labels,
					summary: fmt.Sprintf("%s in %s: %s", what, zfs.Place(p.Name, cv.Vdev.Name), errorText(l)),
					desc: fmt.Sprintf("The error counters of %s rose (%d new since zwatch started watching it). Checksum errors mean bad data came back; read/write errors mean I/O failed. Check the disk's SMART data and cabling; `zpool clear %s` once fixed.",
						vdevID(l), vc.Total, p.Name),
					evidence: ev, repl: repl,
				})
			}
			if n := recentErrors(vc, c.now, cfg.RateWindow.D()); n >= uint64(cfg.RateCount) {
				c.emit(cond{
					name: nameVdevErrorRate, severity: alert.Critical, pool: p.Name, serial: serial, count: vc.Total,
					labels:  labels,
					summary: fmt.Sprintf("%s in %s: %d errors in %s", what, zfs.Place(p.Name, cv.Vdev.Name), n, cfg.RateWindow.D()),
					desc: fmt.Sprintf("%d I/O or checksum errors within %s on %s: at this rate ZFS's diagnosis engine faults a device. Prepare a replacement.",
						n, cfg.RateWindow.D(), vdevID(l)),
					evidence: ev, repl: repl,
				})
			}
		}
	}
	// Forget the counters of devices that left this pool.
	prefix := p.Name + "/"
	leaves := vdevErrorsMemory.peek(c.h).leaves()
	for k := range leaves {
		if strings.HasPrefix(k, prefix) && !present[k] {
			delete(leaves, k)
			c.h.dirty = true
		}
	}
}

// leaves are the counters by leaf; nil when there are none (m is nil).
func (m *vdevErrors) leaves() map[string]*vdevCounters {
	if m == nil {
		return nil
	}
	return m.Leaves
}

// recentErrors sums the increases within window before now.
func recentErrors(vc *vdevCounters, now time.Time, window time.Duration) uint64 {
	from := now.Add(-window).Unix()
	var n uint64
	for _, r := range vc.Recent {
		if r.T > from {
			n += r.N
		}
	}
	return n
}

// errorText is "3 checksum errors", "1 read and 2 write errors".
func errorText(l *zfs.Vdev) string {
	var parts []string
	add := func(n uint64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(l.ReadErrors, "read")
	add(l.WriteErrors, "write")
	add(l.ChecksumErrors, "checksum")
	s := strings.Join(parts, " and ")
	if l.ReadErrors+l.WriteErrors+l.ChecksumErrors == 1 {
		return s + " error"
	}
	return s + " errors"
}
