package collectors

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/disk"
)

// UrgentSkip says why a CollectTarget read nothing; the daemon logs it
// at debug level, as it is the normal answer to a burst of requests.
type UrgentSkip struct{ Target, Why string }

func (e *UrgentSkip) Error() string { return "urgent SMART read of " + e.Target + " skipped: " + e.Why }

// CollectTarget implements TargetCollector: it reads the SMART data of the
// one disk target names (kernel name, /dev path, by-id path, partition of
// any) now, without -n standby since that disk is the one erroring, and
// publishes it as a normal pass would. Each disk is read at most once per
// UrgentMinInterval; no other disk is touched. With smart.devices set, a
// disk not listed there is not read.
func (c *SmartCollector) CollectTarget(ctx context.Context, pub Publisher, target string) error {
	t, err := c.urgentTarget(target)
	if err != nil {
		return err
	}
	if !c.claimUrgent(t) {
		return &UrgentSkip{Target: target, Why: fmt.Sprintf("%s was read less than %s ago", t.dev, c.Config.UrgentMinInterval)}
	}
	d, err := c.readOne(ctx, t)
	if err != nil {
		return c.publishError(ctx, pub)(c.errorFor(t, err))
	}
	return c.publishReport(ctx, pub)(d)
}

// urgentTarget finds the disk behind target and how a full pass reads it.
func (c *SmartCollector) urgentTarget(target string) (smartTarget, error) {
	ids, err := disk.Discover(c.root())
	if err != nil {
		return smartTarget{}, fmt.Errorf("urgent SMART read of %s: %w", target, err)
	}
	res := disk.NewResolver(c.root(), ids)
	id := lookup(res, strings.TrimSpace(target))
	if id == nil || id.Kernel == "" {
		return smartTarget{}, &UrgentSkip{Target: target, Why: "it names no disk present now"}
	}
	if len(c.Config.Devices) > 0 {
		for _, d := range c.Config.Devices {
			if cid := lookup(res, d.Device); cid != nil && cid.Kernel == id.Kernel {
				return smartTarget{dev: d.Device, typ: d.Type, id: id, awake: true}, nil
			}
		}
		return smartTarget{}, &UrgentSkip{Target: target, Why: "smart.devices does not list " + id.Kernel}
	}
	c.mu.Lock()
	known, ok := c.known[id.Kernel]
	c.mu.Unlock()
	if ok && known.openErr == "" {
		known.id, known.awake = id, true
		return known, nil
	}
	// Not in the last scan (none yet, or a disk added since): smartctl
	// picks the type itself, as --scan-open would have.
	return smartTarget{dev: filepath.Join("/dev", id.Kernel), id: id, awake: true}, nil
}

// claimUrgent reports whether t may be read now, and if so counts it as read.
func (c *SmartCollector) claimUrgent(t smartTarget) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if at, ok := c.urgentAt[t.id.Kernel]; ok && now.Sub(at) < c.Config.UrgentMinInterval {
		return false
	}
	if c.urgentAt == nil {
		c.urgentAt = map[string]time.Time{}
	}
	// Forget disks not asked about for a while: the map stays as small as
	// the set of disks misbehaving now.
	for k, at := range c.urgentAt {
		if now.Sub(at) >= c.Config.UrgentMinInterval {
			delete(c.urgentAt, k)
		}
	}
	c.urgentAt[t.id.Kernel] = now
	return true
}

// noteTargets remembers a full pass's targets by kernel name.
func (c *SmartCollector) noteTargets(ts []smartTarget) {
	known := make(map[string]smartTarget, len(ts))
	for _, t := range ts {
		if t.id != nil && t.id.Kernel != "" {
			known[t.id.Kernel] = t
		}
	}
	c.mu.Lock()
	c.known = known
	c.mu.Unlock()
}

var _ TargetCollector = (*SmartCollector)(nil)
