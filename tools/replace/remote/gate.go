package remote

import (
	"context"
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/tools/replace"
)

// targetOf is the disk of an incident's alerts that can be replaced from
// here, or why there is none.
func targetOf(alerts []alert.Alert, host, incident string) (target, string) {
	for _, a := range alerts {
		if h := a.Labels["host"]; h != "" && h != host {
			return target{}, fmt.Sprintf("The disk is on %s, and zwatch replaces only the disks of the machine it runs on: run zwatch replace on %s.", h, h)
		}
	}
	for _, a := range alerts {
		if r := a.Replacement; r != nil && (r.VdevGUID != "" || r.VdevPath != "") && r.Pool != "" {
			return target{incident: incident, repl: *r}, ""
		}
	}
	return target{}, "This incident names no pool device that zwatch replace can replace."
}

// look reads the pool of repl now and says why its device must not be
// replaced from the phone: the pool is gone or suspended, a scrub or
// resilver runs, the device is being replaced already, or it still serves
// data in a vdev with no margin left (a second fault during the resilver
// would lose data: that is a decision for someone at the box).
func (s *Service) look(ctx context.Context, repl alert.Replacement) (*zfs.Pool, *zfs.Vdev, string, error) {
	pools, err := s.Status.Status(ctx, "")
	if err != nil {
		return nil, nil, "zpool status could not be read: " + err.Error(), nil
	}
	var pool *zfs.Pool
	for _, p := range pools {
		if p.Name == repl.Pool {
			pool = p
		}
	}
	if pool == nil {
		return nil, nil, fmt.Sprintf("Pool %s is not imported now.", repl.Pool), nil
	}
	top, parent, leaf := findLeaf(pool, repl)
	switch {
	case leaf == nil:
		return nil, nil, fmt.Sprintf("Device %s is no longer in pool %s: it has been replaced or removed.", oldArg(repl), pool.Name), nil
	case pool.State == zfs.StateSuspended || repl.PoolState == zfs.StateSuspended:
		return nil, nil, fmt.Sprintf("Pool %s is suspended: it needs its device back, not a replacement (the guide on the page says how).", pool.Name), nil
	case pool.Scan.State == zfs.ScanStateScanning:
		return nil, nil, fmt.Sprintf("A %s runs in pool %s: replace after it ends (zpool status %s).", pool.Scan.Function, pool.Name, pool.Name), nil
	case parent != nil && parent.Type == zfs.VdevReplacing:
		return nil, nil, fmt.Sprintf("%s is being replaced already in pool %s (zpool status %s).", leafName(leaf), pool.Name, pool.Name), nil
	}
	if serving(leaf) {
		if left, ok := marginLeft(top); ok && left <= 0 {
			return nil, nil, fmt.Sprintf("%s still serves data and %s has no margin left: a fault during the resilver would lose data. Not offered from the phone: back up first, then run zwatch replace at the box.", leafName(leaf), top.Name), nil
		}
	}
	return pool, leaf, "", nil
}

// oldArg names repl's device for zwatch replace: its GUID, else its path
// (text zpool status prints no GUID of a device that is present).
func oldArg(repl alert.Replacement) string {
	if repl.VdevGUID != "" {
		return repl.VdevGUID
	}
	return repl.VdevPath
}

// findLeaf finds repl's leaf, by GUID or else by path, with its top-level
// vdev and its parent.
func findLeaf(p *zfs.Pool, repl alert.Replacement) (top, parent, leaf *zfs.Vdev) {
	is := func(v *zfs.Vdev) bool {
		if repl.VdevGUID != "" {
			return v.GUID == repl.VdevGUID
		}
		return repl.VdevPath != "" && (v.Path == repl.VdevPath || v.Name == repl.VdevPath)
	}
	var walk func(v, up *zfs.Vdev) (*zfs.Vdev, *zfs.Vdev)
	walk = func(v, up *zfs.Vdev) (*zfs.Vdev, *zfs.Vdev) {
		if v.IsLeaf() && is(v) {
			return v, up
		}
		for _, c := range v.Children {
			if l, pa := walk(c, v); l != nil {
				return l, pa
			}
		}
		return nil, nil
	}
	for _, cv := range p.AllVdevs() {
		if l, pa := walk(cv.Vdev, nil); l != nil {
			return cv.Vdev, pa, l
		}
	}
	return nil, nil, nil
}

// serving: the device still takes part in the pool's I/O.
func serving(v *zfs.Vdev) bool { return v.State == "ONLINE" || v.State == "DEGRADED" }

// marginLeft is how many more member failures top survives, counting
// members that are not ONLINE as failed; false when top has no redundancy
// to count (a single disk, a dRAID whose spares zwatch does not weigh).
func marginLeft(top *zfs.Vdev) (int, bool) {
	unhealthy := 0
	for _, c := range top.Children {
		if c.State != "ONLINE" {
			unhealthy++
		}
	}
	switch top.Type {
	case zfs.VdevMirror:
		return len(top.Children) - 1 - unhealthy, true
	case zfs.VdevRaidz:
		if top.Parity > 0 {
			return top.Parity - unhealthy, true
		}
	case zfs.VdevDisk, zfs.VdevFile:
		return 0, true
	}
	return 0, false
}

// qualifying are the usable candidates whose SMART health does not say
// FAILED, and why the others that zwatch replace accepted were left out.
func (s *Service) qualifying(ctx context.Context, cands []replace.Candidate) (ok []replace.Candidate, refused []string) {
	for _, c := range cands {
		if !c.Usable {
			continue
		}
		if s.Smart != nil {
			passed, err := s.Smart(ctx, c.Device)
			switch {
			case err != nil:
				refused = append(refused, fmt.Sprintf("%s: its SMART health could not be read (%v)", c.Device, err))
				continue
			case passed != nil && !*passed:
				refused = append(refused, c.Device+": SMART says the disk is FAILING")
				continue
			}
		}
		ok = append(ok, c)
	}
	return ok, refused
}

// noDiskText says that no disk qualifies, what would, and why each disk
// seen was refused.
func noDiskText(pool string, plan replace.Plan, refused []string) string {
	var b strings.Builder
	b.WriteString("No disk qualifies as the new one yet. Plug in a whole, empty disk")
	if plan.MinSizeBytes > 0 {
		fmt.Fprintf(&b, " of at least %s", units.IEC(plan.MinSizeBytes))
	}
	fmt.Fprintf(&b, ", then tap Replace again (pool %s).", pool)
	// Disks zwatch replace accepted come first; the pools' own members are
	// no news.
	seen := append([]string(nil), refused...)
	for _, c := range plan.Candidates {
		if c.Usable || len(c.Reasons) == 0 || c.Reasons[0].Code == replace.CodeInPool {
			continue
		}
		seen = append(seen, strings.TrimPrefix(c.Device, "/dev/disk/by-id/")+": "+c.Reasons[0].Text)
	}
	if len(seen) > 5 {
		seen = append(seen[:5], fmt.Sprintf("and %d more", len(seen)-5))
	}
	if len(seen) > 0 {
		b.WriteString("\nDisks seen:\n- " + strings.Join(seen, "\n- "))
	}
	return b.String()
}
