package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// slowIOSettings are rules.slow_io: I/Os ZFS saw take longer than
// zio_slow_io_ms, and I/O that hangs (IOHung).
type slowIOSettings struct {
	// Rises: a device whose slow-I/O counter rose in this many polls within
	// Window is SlowIO.
	Rises  int             `yaml:"rises" doc:"a device's slow-I/O counter (zpool status -s) rising in this many polls within window → SlowIO"`
	Window config.Duration `yaml:"window"`
	// Clear: SlowIO and IOHung resolve after this long without a new slow
	// I/O or deadman event.
	Clear config.Duration `yaml:"clear" doc:"no new slow I/O or deadman event for this long → resolved"`
}

var slowIOConfig = defineConfig("slow_io", slowIOSettings{
	Rises: 2, Window: config.Duration(time.Hour), Clear: config.Duration(6 * time.Hour),
})

func (s slowIOSettings) validate(p string, errs *config.Errors) {
	if s.Rises < 1 {
		errs.Add(p+".rises", s.Rises, "must be at least 1")
	}
	config.CheckMinDuration(errs, p+".window", s.Window, time.Minute)
	config.CheckMinDuration(errs, p+".clear", s.Clear, time.Minute)
}

func slowIORule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus, facts.ZpoolEvent},
		Eval:  poolEval(ruleSlowIO),
		Config: []config.RuleSection{
			slowIOConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameSlowIO,
			Thresholds: slowIOConfig.thresholds("rises", "window", "clear"),
			Severity:   "warning",
			Condition: "a device's slow-I/O counter (`zpool status -s`, I/Os slower than `zio_slow_io_ms`) rose in `slow_io.rises` ({slow_io.rises}) polls within `slow_io.window` ({slow_io.window}); " +
				"where zpool prints no counter (before 0.8), `ereport.fs.zfs.delay` events count instead; a counter that falls (`zpool clear`) is no rise; resolves after `slow_io.clear` ({slow_io.clear}) without a rise",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
		Memory: []memoryDef{slowIOMemory},
	}
}

// slowIOState is what SlowIO and IOHung remember of a host (slowIOMemory):
// each leaf's slow-I/O counter and recent rises, and each pool's hung I/O.
// One memory for both, as both read the zpool events (the kernel clock)
// and tell a pool's devices by the same leaves.
type slowIOState struct {
	// Leaves by pool + "/" + vdevID.
	Leaves map[string]*slowLeaf `json:"leaves,omitempty"`
	// Hung by pool, and the kernel clock read from ereports (rule_io_hung.go).
	Hung  map[string]*hungPool `json:"hung,omitempty"`
	Clock kernelClock          `json:"clock,omitempty"`
}

// slowLeaf is one leaf's slow-I/O history.
type slowLeaf struct {
	// Count is the counter at the last poll; Known says zpool printed one.
	Count uint64 `json:"n,omitempty"`
	Known bool   `json:"known,omitempty"`
	// Rises are the unix seconds of the polls (or delay events) that saw
	// new slow I/Os, at most maxRateEntries; New is how many slow I/Os
	// those rises added since zwatch watches the leaf.
	Rises    []int64   `json:"rises,omitempty"`
	New      uint64    `json:"new,omitempty"`
	LastRise time.Time `json:"last_rise,omitempty"`
	// Firing is set once the rises reached slow_io.rises within the
	// window, and cleared after slow_io.clear without a rise.
	Firing bool `json:"firing,omitempty"`
	// SlowestNs is the longest I/O a delay event reported (zio_delta).
	SlowestNs uint64 `json:"slowest_ns,omitempty"`
	// GUID and Path tie delay events (vdev_guid, vdev_path) to the leaf.
	GUID string `json:"guid,omitempty"`
	Path string `json:"path,omitempty"`
}

// maxSlowLeaves bounds the leaves remembered per host (a 1,000-disk host
// is past what one zwatch watches; the bound keeps bad input cheap).
const maxSlowLeaves = 4096

// slowIOMemory: version 0 (41d2458's slow_io) has the same shape.
var slowIOMemory = remember("slow_io", 1, sameShape[slowIOState])

// slowIO is the host's slow-I/O memory, ready to write to.
func (h *hostState) slowIO() *slowIOState {
	st := slowIOMemory.of(h)
	if st.Leaves == nil {
		st.Leaves = map[string]*slowLeaf{}
	}
	if st.Hung == nil {
		st.Hung = map[string]*hungPool{}
	}
	return st
}

// rise records new slow I/Os seen at now.
func (s *slowLeaf) rise(n uint64, now time.Time) {
	s.New += n
	s.LastRise = now
	s.Rises = append(s.Rises, now.Unix())
	if len(s.Rises) > maxRateEntries {
		s.Rises = s.Rises[len(s.Rises)-maxRateEntries:]
	}
}

// risesWithin counts the rises within window before now.
func (s *slowLeaf) risesWithin(now time.Time, window time.Duration) int {
	from := now.Add(-window).Unix()
	n := 0
	for _, t := range s.Rises {
		if t > from {
			n++
		}
	}
	return n
}

// nameSlowIO: a device whose I/Os keep taking longer than zio_slow_io_ms
// (30 s by default). A disk that retries reads internally, a failing cable
// or a dying SSD controller shows this before any READ error: the device
// is the likely next failure. Slow I/Os counted when zwatch first sees a
// device are not news (they accumulate over months on healthy disks under
// load); rises are.
func ruleSlowIO(c *evalCtx, p *zfs.Pool) {
	st := c.h.slowIO()
	present := map[string]bool{}
	for _, cv := range p.AllVdevs() {
		for _, l := range cv.Vdev.Leaves() {
			if l.Type == zfs.VdevDSpare {
				continue
			}
			key := p.Name + "/" + vdevID(l)
			present[key] = true
			s := st.Leaves[key]
			if s == nil {
				if len(st.Leaves) >= maxSlowLeaves {
					continue
				}
				s = &slowLeaf{}
				st.Leaves[key] = s
				c.h.dirty = true
			}
			countSlowIOs(c.h, s, l, c.now)
			judgeSlowLeaf(c, p, cv.Vdev, l, s)
		}
	}
	prefix := p.Name + "/"
	for k := range st.Leaves {
		if strings.HasPrefix(k, prefix) && !present[k] {
			delete(st.Leaves, k)
			c.h.dirty = true
		}
	}
}

// countSlowIOs compares leaf l's counter with the last poll's. A counter
// that falls was reset (zpool clear, export and import): what it shows
// now is not counted as a rise, since a reset hides when those I/Os were.
func countSlowIOs(h *hostState, s *slowLeaf, l *zfs.Vdev, now time.Time) {
	if s.GUID != l.GUID || s.Path != l.Path {
		s.GUID, s.Path = l.GUID, l.Path
		h.dirty = true
	}
	if l.SlowIOs == nil {
		if s.Known {
			s.Known = false
			h.dirty = true
		}
		return
	}
	cur := *l.SlowIOs
	switch {
	case !s.Known:
		// First sight: the counter is history, not news.
	case cur > s.Count:
		s.rise(cur-s.Count, now)
	case cur == s.Count:
		return
	}
	s.Count, s.Known = cur, true
	h.dirty = true
}

// judgeSlowLeaf emits SlowIO for s while it fires.
func judgeSlowLeaf(c *evalCtx, p *zfs.Pool, top, l *zfs.Vdev, s *slowLeaf) {
	cfg := slowIOConfig.of(c.cfg)
	if cfg.Rises <= 0 {
		return
	}
	rises := s.risesWithin(c.now, cfg.Window.D())
	switch {
	case !s.Firing && rises >= cfg.Rises:
		s.Firing = true
		c.h.dirty = true
	case s.Firing && c.now.Sub(s.LastRise) >= cfg.Clear.D():
		s.Firing = false
		c.h.dirty = true
	}
	if !s.Firing {
		return
	}
	serial := c.h.serialOf(l)
	what := diskName(vdevID(l), serial)
	ev := map[string]string{
		"new_slow_ios": itoa(s.New), "rises_in_window": strconv.Itoa(rises),
		"last_rise": s.LastRise.UTC().Format(time.RFC3339), "top_vdev": top.Name, "state": l.State,
	}
	counted := "slow I/Os"
	if s.Known {
		ev["slow_ios"] = itoa(s.Count)
	} else {
		counted = "delay events"
	}
	slowest := ""
	if s.SlowestNs > 0 {
		d := time.Duration(s.SlowestNs).Round(time.Millisecond)
		ev["slowest_io"] = d.String()
		slowest = fmt.Sprintf(" The slowest took %s.", d)
	}
	repl := replacementFor(c, p, top, l, serial)
	c.emit(cond{
		name: nameSlowIO, severity: alert.Warning, pool: p.Name, serial: serial, count: s.New,
		labels: map[string]string{"pool": p.Name, "vdev": vdevID(l)},
		summary: fmt.Sprintf("%s in %s: %d new %s, likely the next disk to fail",
			what, zfs.Place(p.Name, top.Name), s.New, counted),
		desc: fmt.Sprintf("I/Os to %s keep taking longer than zio_slow_io_ms (30 s by default): new ones in %d polls within %s.%s "+
			"A disk that retries reads internally, a failing cable or backplane slot, or a dying controller shows this before ZFS counts an error: "+
			"check its SMART data (pending and reallocated sectors, CRC errors) and the kernel log, and have a replacement ready. "+
			"`zpool status -s %s` shows the counters; `zpool events -v %s` the delay events.",
			vdevID(l), rises, slowIOConfig.of(c.cfg).Window.D(), slowest, p.Name, p.Name),
		evidence: ev, repl: repl,
	})
}

// noteDelay takes an ereport.fs.zfs.delay event: the leaf's slowest I/O,
// and a rise where zpool prints no counter for it. Events come at up to
// zfs_slow_io_events_per_second (20) per device and the follower folds
// repeats within 10 s, so one rise per minute per leaf stands for a spell.
func noteDelay(h *hostState, ev *zfs.Event, now time.Time) bool {
	st := h.slowIO()
	s := leafOfEvent(st, ev)
	if s == nil {
		return false
	}
	if d, ok := eventUint(ev.Fields["zio_delta"]); ok && d > s.SlowestNs {
		s.SlowestNs = d
		h.dirty = true
	}
	if s.Known || now.Sub(s.LastRise) < time.Minute {
		return false // the counter speaks for the leaf
	}
	s.rise(1, now)
	h.dirty = true
	return true
}

// leafOfEvent finds the remembered leaf an event names, by pool and vdev
// GUID, else by path.
func leafOfEvent(st *slowIOState, ev *zfs.Event) *slowLeaf {
	if ev.Pool == "" || ev.VdevGUID == "" && ev.VdevPath == "" {
		return nil
	}
	prefix := ev.Pool + "/"
	var byPath *slowLeaf
	for k, s := range st.Leaves {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if ev.VdevGUID != "" && s.GUID == ev.VdevGUID {
			return s
		}
		if ev.VdevPath != "" && s.Path == ev.VdevPath {
			byPath = s
		}
	}
	return byPath
}

// eventUint reads a number as zpool events -v prints it (0x1d4c0).
func eventUint(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err := strconv.ParseUint(h, 16, 64)
		return n, err == nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}
