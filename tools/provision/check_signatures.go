package provision

import (
	"fmt"
	"strings"
)

// checkSignatures probes the disk and each partition for partition tables,
// filesystems and ZFS labels (the signatures and zfs-label checks): zpool
// create would destroy them, so they are refused, or with --wipe listed
// with what wipefs will erase. A disk of an imported pool is refused even
// with --wipe.
func (s *inspector) checkSignatures(d *DiskInfo) {
	k := d.ID.Kernel
	devs := []string{devOf(d.ID)}
	for _, p := range d.Partitions {
		devs = append(devs, s.partDevice(d.ID, p))
	}
	var found []signature
	for _, dev := range devs {
		g, err := s.probe(dev)
		if err != nil {
			s.add(CheckResult{Check: "signatures", Subject: k, Status: Fail, Reason: "blkid -p " + dev + " failed: " + err.Error(), Fix: "install util-linux (blkid, wipefs) and run as root"})
			return
		}
		if g.kv["TYPE"] != "" || g.kv["PTTYPE"] != "" {
			found = append(found, g)
		}
	}
	if len(found) == 0 {
		s.add(CheckResult{Check: "signatures", Subject: k, Status: Pass, Reason: "blank: no partition table, filesystem or ZFS label (blkid -p)"})
		s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Pass, Reason: "no ZFS label: not part of any pool"})
		return
	}
	// ZFS labels first: a disk of an imported pool is never offered for wiping.
	var zfsPools []string
	zfsDev := map[string]bool{}
	for _, g := range found {
		if g.kv["TYPE"] != "zfs_member" {
			continue
		}
		zfsDev[g.device] = true
		pool := g.kv["LABEL"]
		for _, imp := range s.in.Pools {
			if imp == pool {
				s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Fail,
					Reason: fmt.Sprintf("%s belongs to the imported pool %s (%s)", k, pool, g.device),
					Fix:    "this disk is in use: choose another disk (zwatch never wipes a disk of an imported pool)"})
				return
			}
		}
		state := s.zdbState(g.device)
		zfsPools = append(zfsPools, fmt.Sprintf("%s%s", pool, state))
	}
	if len(zfsPools) > 0 {
		reason := fmt.Sprintf("%s carries ZFS labels of pool %s, not imported: `zpool import` would offer it", k, strings.Join(zfsPools, ", "))
		if s.opts.Wipe {
			s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Warn, Reason: reason + "; --wipe clears them (zpool labelclear) and the pool can no longer be imported from this disk"})
		} else {
			s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Fail, Reason: reason,
				Fix: "if that pool is wanted, import it (zpool import) instead; if it is gone for good, run again with --wipe"})
		}
	} else {
		s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Pass, Reason: "no ZFS label: not part of any pool"})
	}
	var what []string
	for _, g := range found {
		what = append(what, g.String())
	}
	if !s.opts.Wipe {
		s.add(CheckResult{Check: "signatures", Subject: k, Status: Fail,
			Reason: "not blank: " + strings.Join(what, "; "),
			Fix:    "check nothing on it is needed (mount it read-only and look); then run again with --wipe to erase these signatures (zwatch shows what will be destroyed first)"})
		return
	}
	// --wipe: show what wipefs would erase, partitions before the disk.
	var targets []WipeTarget
	var preview []string
	for i := len(found) - 1; i >= 0; i-- {
		g := found[i]
		out, _, err := runOut(s.ctx, s.h, "wipefs", "--no-act", g.device)
		text := strings.TrimRight(string(out), "\n")
		if err != nil {
			text = "wipefs --no-act failed: " + err.Error()
		}
		preview = append(preview, text)
		targets = append(targets, WipeTarget{Device: g.device, ZFSLabel: zfsDev[g.device], Preview: text})
	}
	s.wipe = append(s.wipe, targets...)
	s.add(CheckResult{Check: "signatures", Subject: k, Status: Warn,
		Reason: "--wipe will destroy: " + strings.Join(what, "; "),
		Fix:    "the wipefs commands below keep a backup of each erased signature in $HOME (wipefs --backup); the data behind them is not erased but will be overwritten by the pool",
		Detail: strings.Join(preview, "\n")})
}
