package metrics

import (
	"strings"

	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/views/statusview"
)

// healthCode is zfs_exporter's pool health encoding (0 ONLINE … 6
// SUSPENDED), extended for vdevs with the spare states; ok is false for a
// state zfs_exporter has no code for.
func healthCode(state string) (code float64, ok bool) {
	switch state {
	case zfs.StateOnline:
		return 0, true
	case zfs.StateDegraded:
		return 1, true
	case zfs.StateFaulted:
		return 2, true
	case zfs.StateOffline:
		return 3, true
	case zfs.StateUnavail:
		return 4, true
	case zfs.StateRemoved:
		return 5, true
	case zfs.StateSuspended:
		return 6, true
	case zfs.StateAvail:
		return 7, true
	case zfs.StateInUse:
		return 8, true
	}
	return 9, false
}

func (c *viewCollector) pool(e *emitter, host string, p *statusview.Pool) {
	d := c.d
	l := []string{host, p.Name}
	if code, ok := healthCode(p.State); ok && code <= 6 {
		e.gauge(d.poolHealth, code, l...)
	}
	cur := strings.ToLower(p.State)
	known := false
	// node_exporter's zpool states, in its order: each gets a series.
	for _, s := range [...]string{"online", "degraded", "faulted", "offline", "removed", "unavail", "suspended"} {
		known = known || s == cur
		e.gauge(d.poolState, boolf(s == cur), host, p.Name, s)
	}
	if !known && cur != "" {
		// SPLIT, TRANSITIONING…: shown rather than lost.
		e.gauge(d.poolState, 1, host, p.Name, cur)
	}
	if p.CapacityAt != nil {
		e.gauge(d.poolAlloc, float64(p.AllocBytes), l...)
		e.gauge(d.poolSize, float64(p.SizeBytes), l...)
		e.gauge(d.poolFree, float64(p.FreeBytes), l...)
		e.gauge(d.poolCapacity, p.CapacityPct/100, l...)
		if p.FragmentPct != nil {
			e.gauge(d.poolFragmentation, *p.FragmentPct/100, l...)
		}
		e.gauge(d.poolReadOnly, boolf(p.ReadOnly), l...)
		e.gauge(d.poolCapacityAt, unix(*p.CapacityAt), l...)
	}
	if p.StatusAt != nil {
		if !p.ErrorsUnknown {
			e.gauge(d.poolDataErrors, float64(p.DataErrors), l...)
		}
		e.gauge(d.poolStatusAt, unix(*p.StatusAt), l...)
		c.scan(e, l, p.Scan)
	}
	if p.Margin != nil {
		e.gauge(d.poolMargin, float64(*p.Margin), l...)
	}
	if p.LastScrub != nil {
		e.gauge(d.poolLastScrub, unix(*p.LastScrub), l...)
	}
	for i := range p.Vdevs {
		c.vdev(e, host, p.Name, &p.Vdevs[i])
	}
}

// scan follows zfs_exporter PR #68: the last scan's errors and repairs,
// the running scan's byte counts and rate (0 when none runs), and when the
// last scan completed (0 when none did).
func (c *viewCollector) scan(e *emitter, l []string, s zfs.Scan) {
	d := c.d
	fn, state := orNone(s.Function), orNone(s.State)
	running := state == zfs.ScanStateScanning || state == zfs.ScanStatePaused
	e.gauge(d.scrubErrors, float64(s.Errors), l...)
	e.gauge(d.scrubRepaired, float64(s.RepairedBytes), l...)
	var scanned, issued, rate float64
	if running {
		scanned, issued, rate = float64(s.ExaminedBytes), float64(s.IssuedBytes), float64(s.RateBytes)
	}
	e.gauge(d.scrubScanned, scanned, l...)
	e.gauge(d.scrubIssued, issued, l...)
	e.gauge(d.scrubRate, rate, l...)
	completed := 0.0
	if state == zfs.ScanStateFinished && s.End != nil {
		completed = unix(*s.End)
	}
	e.gauge(d.scrubLastCompleted, completed, l...)
	e.gauge(d.scanInfo, 1, l[0], l[1], fn, state)
	if running {
		fl := []string{l[0], l[1], fn}
		e.gauge(d.scanProgress, s.PercentDone/100, fl...)
		if s.TotalBytes > 0 {
			e.gauge(d.scanTotal, float64(s.TotalBytes), fl...)
		}
		if s.ETASeconds > 0 {
			e.gauge(d.scanETA, float64(s.ETASeconds), fl...)
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return zfs.ScanNone
	}
	return s
}

func (c *viewCollector) vdev(e *emitter, host, pool string, v *statusview.Vdev) {
	d := c.d
	l := []string{host, pool, v.Name, v.Class, v.Type}
	code, _ := healthCode(v.State)
	e.gauge(d.vdevHealth, code, l...)
	e.gauge(d.vdevRead, float64(v.ReadErrors), l...)
	e.gauge(d.vdevWrite, float64(v.WriteErrors), l...)
	e.gauge(d.vdevChecksum, float64(v.ChecksumErrors), l...)
	if v.SlowIOs != nil {
		e.gauge(d.vdevSlow, float64(*v.SlowIOs), l...)
	}
	if v.Serial != "" || v.ByID != "" || v.Bay != "" {
		e.gauge(d.vdevLeaf, 1, append(l, v.Serial, v.ByID, v.Bay)...)
	}
}
