package rules

import (
	"fmt"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
)

// observeDisks: the disks present now (the inventory collector).
func observeDisks(o observation, env bus.Envelope, d *facts.DisksData) error {
	e, h, now, sum := o.e, o.h, o.now, o.sum
	h.remember("disks", sum)
	e.noteInventory(h, d.Disks, env.CollectedAt)
	e.evalPools(h, now)
	return nil
}

// observeDiskForget: the owner says a disk is gone for good (zwatch forget-disk).
func observeDiskForget(o observation, env bus.Envelope, d *facts.DiskForgetData) error {
	e, h, now := o.e, o.h, o.now
	if d.Serial == "" {
		return fmt.Errorf("decode %s from %s: no disk named", env.Schema, env.Host)
	}
	// The next inventory is read even if it is the same as the last: a
	// disk forgotten while present is remembered again.
	delete(h.last, "disks")
	if e.forgetDisk(h, d.Serial) {
		e.log.Info("disk forgotten", "host", env.Host, "disk", d.Serial, "by", d.By)
	} else {
		e.log.Info("disk to forget is not known", "host", env.Host, "disk", d.Serial, "by", d.By)
	}
	e.evalPools(h, now)
	return nil
}

// observeZFSVersion: the ZFS userland and kernel module versions.
func observeZFSVersion(o observation, env bus.Envelope, d *facts.ZFSVersionData) error {
	e, h, now := o.e, o.h, o.now
	e.noteZFSVersion(h, *d, now)
	e.evalPools(h, now)
	return nil
}
