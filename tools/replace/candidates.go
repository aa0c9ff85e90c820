package replace

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/zwatch/zwatch/internal/units"

	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// Reason codes: why a disk cannot be the new disk, or what to know about it.
const (
	CodeSameAsOld    = "same-as-old"
	CodeInPool       = "in-pool"
	CodeTooSmall     = "too-small"
	CodeSizeUnknown  = "size-unknown"
	CodeSector       = "sector-size"
	CodeNotWhole     = "not-whole-disk"
	CodePartitioned  = "partitioned"
	CodeSignature    = "signature"
	CodeMounted      = "mounted"
	CodeHeld         = "held"
	CodeProbeFailed  = "probe-failed"
	CodeSMR          = "smr"            // warning
	CodeAshiftUnsure = "ashift-unknown" // warning
)

// Reason is one finding about a candidate disk.
type Reason struct {
	Code string `json:"code"`
	Text string `json:"text"`
	Fix  string `json:"fix,omitempty"`
}

// Target describes the vdev member being replaced.
type Target struct {
	Pool    string
	TopVdev string
	// Old is the disk being replaced, when known.
	Old *disk.Identity
	// MinSize is the size in bytes of the smallest member of the vdev; the
	// new disk must be at least as large. 0 when unknown.
	MinSize uint64
	// Ashift of the vdev (9 = 512-byte, 12 = 4 KiB blocks); 0 when unknown.
	// zpool status does not print it: `zdb -C POOL` or `zpool get ashift`.
	Ashift int
	// MemberLogicalSector is the logical sector size of the members still
	// in the vdev, 0 when unknown. It stands in for an unknown ashift.
	MemberLogicalSector int
}

// Candidate is one disk considered as the new disk.
type Candidate struct {
	Disk disk.Identity `json:"disk"`
	// Device is what to hand to zpool replace: the by-id path of the whole disk.
	Device string `json:"device"`
	Usable bool   `json:"usable"`
	SMR    bool   `json:"smr,omitempty"`
	// Reasons say why the disk is refused; empty when Usable.
	Reasons []Reason `json:"reasons,omitempty"`
	// Warnings are worth reading even for a usable disk (SMR, unknown ashift).
	Warnings []Reason `json:"warnings,omitempty"`
}

// Candidates judges every disk in disks as the replacement for t. A disk
// is usable when it is a whole disk, not the old one, not a member of any
// pool, large enough, sector-compatible, and has no partitions, signatures,
// mounts or holders. Usable disks come first.
func Candidates(ctx context.Context, disks []disk.Identity, pools []*zfs.Pool, t Target, probe Probe) []Candidate {
	out := make([]Candidate, 0, len(disks))
	for _, d := range disks {
		out = append(out, judge(ctx, d, pools, t, probe))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Usable && !out[j].Usable })
	return out
}

// judge runs every check on one disk and records all findings, so a person
// sees every problem at once.
func judge(ctx context.Context, d disk.Identity, pools []*zfs.Pool, t Target, probe Probe) Candidate {
	c := Candidate{Disk: d, Device: devicePath(d)}
	if t.Old != nil && sameDisk(d, *t.Old) {
		c.Reasons = append(c.Reasons, Reason{Code: CodeSameAsOld,
			Text: "it is the disk being replaced",
			Fix:  "pick a different disk; to put the same disk back after a fix, use `zpool online` or `zpool clear` instead"})
	} else if where := poolMembership(d, pools); where != "" {
		c.Reasons = append(c.Reasons, Reason{Code: CodeInPool,
			Text: "it is in use by " + where,
			Fix:  "pick a disk that is in no pool"})
	}
	c.Reasons = append(c.Reasons, sizeReasons(d, t)...)
	c.Reasons = append(c.Reasons, sectorReasons(d, t, &c.Warnings)...)
	c.Reasons = append(c.Reasons, usageReasons(ctx, d, probe)...)
	if what, ok := SMRModel(d.Model); ok {
		c.SMR = true
		c.Warnings = append(c.Warnings, Reason{Code: CodeSMR,
			Text: "known drive-managed SMR model " + what + ": resilvers onto it can take days or fail",
			Fix:  "prefer a CMR disk (WD Red Plus/Pro, Seagate IronWolf, Toshiba N300)"})
	}
	c.Usable = len(c.Reasons) == 0
	return c
}

// poolMembership names the pool and vdev d is a member of, "" if none. Every
// class counts (spares and cache too): a disk in any of them is taken.
func poolMembership(d disk.Identity, pools []*zfs.Pool) string {
	for _, p := range pools {
		if p == nil {
			continue
		}
		for _, cv := range p.AllVdevs() {
			for _, leaf := range cv.Vdev.Leaves() {
				if leafMatchesDisk(leaf, d) {
					return fmt.Sprintf("pool %s (%s %s, listed as %s)", p.Name, cv.Class, cv.Vdev.Name, leaf.Name)
				}
			}
		}
	}
	return ""
}

func sizeReasons(d disk.Identity, t Target) []Reason {
	switch {
	case d.SizeBytes == 0:
		return []Reason{{Code: CodeSizeUnknown, Text: "its size is unknown",
			Fix: "check that the disk spun up and is seen by the kernel (`lsblk -b`)"}}
	case t.MinSize > 0 && d.SizeBytes < t.MinSize:
		return []Reason{{Code: CodeTooSmall,
			Text: fmt.Sprintf("it is too small: %s (%d bytes), the vdev needs at least %s (%d bytes)",
				units.Decimal(d.SizeBytes), d.SizeBytes, units.Decimal(t.MinSize), t.MinSize),
			Fix: "use a disk at least as large as the smallest disk of the vdev; nominally equal sizes can differ by a few MB between models"}}
	}
	return nil
}

// sectorReasons refuses a 4Kn disk (4096-byte logical sectors) for a vdev
// made for 512-byte sectors (ashift 9): ZFS cannot address it and zpool
// would refuse it. 512e disks (512 logical, 4096 physical) work anywhere.
func sectorReasons(d disk.Identity, t Target, warn *[]Reason) []Reason {
	if d.LogicalSector <= 512 {
		return nil
	}
	switch {
	case t.Ashift > 0 && t.Ashift < 32 && 1<<t.Ashift < d.LogicalSector:
		return []Reason{{Code: CodeSector,
			Text: fmt.Sprintf("it has %d-byte logical sectors (4Kn) but the vdev was made with ashift=%d (%d-byte blocks)",
				d.LogicalSector, t.Ashift, 1<<t.Ashift),
			Fix: "use a 512n or 512e disk; a 4Kn disk can only join a vdev with ashift=12 or more"}}
	case t.Ashift == 0 && t.MemberLogicalSector != 0 && t.MemberLogicalSector < d.LogicalSector:
		*warn = append(*warn, Reason{Code: CodeAshiftUnsure,
			Text: fmt.Sprintf("it has %d-byte logical sectors (4Kn) and the other members have %d; if the vdev's ashift is 9 zpool will refuse it",
				d.LogicalSector, t.MemberLogicalSector),
			Fix: "check with `zdb -C " + ShellQuote(t.Pool) + " | grep ashift`"})
	}
	return nil
}

// usageReasons asks the probe what is on the disk. A disk that could not
// be probed is refused: handing zpool a disk that holds data is the one
// mistake this command must never help make.
func usageReasons(ctx context.Context, d disk.Identity, probe Probe) []Reason {
	dev := ShellQuote(strutil.FirstNonEmpty(devicePath(d), d.Kernel))
	if probe == nil {
		return []Reason{{Code: CodeProbeFailed, Text: "it was not checked for partitions and signatures",
			Fix: "run zwatch replace as root so it can run lsblk, blkid and wipefs"}}
	}
	u, err := probe.Usage(ctx, d)
	if err != nil {
		return []Reason{{Code: CodeProbeFailed, Text: "it could not be checked: " + err.Error(),
			Fix: "run as root with util-linux installed (lsblk, blkid, wipefs), or inspect it with `lsblk " + dev + "`"}}
	}
	var out []Reason
	if u.Type != "" && u.Type != "disk" {
		out = append(out, Reason{Code: CodeNotWhole, Text: "it is a " + u.Type + ", not a whole disk",
			Fix: "give zpool the whole disk"})
	}
	if len(u.Mounts) > 0 {
		out = append(out, Reason{Code: CodeMounted, Text: "it is mounted at " + strings.Join(u.Mounts, ", "),
			Fix: "it is in use: pick another disk, or unmount it and make sure nothing on it is needed"})
	}
	if len(u.Holders) > 0 {
		out = append(out, Reason{Code: CodeHeld, Text: "it is in use by " + strings.Join(u.Holders, ", "),
			Fix: "it is part of an md array, LVM or dm device: pick another disk"})
	}
	if len(u.Partitions) > 0 {
		out = append(out, Reason{Code: CodePartitioned, Text: "it has partitions (" + strings.Join(u.Partitions, ", ") + ")",
			Fix: wipeFix(d, u)})
	}
	if len(u.Signatures) > 0 {
		out = append(out, Reason{Code: CodeSignature, Text: "it carries signatures: " + signatureList(u.Signatures),
			Fix: wipeFix(d, u)})
	}
	return out
}

// wipeFix tells how to clear a disk that was used before, after checking it
// holds nothing needed. An old ZFS label is cleared with zpool labelclear
// on the device that holds it.
func wipeFix(d disk.Identity, u Usage) string {
	dev := ShellQuote(devicePath(d))
	for _, s := range u.Signatures {
		if s.Type == "zfs_member" {
			return "it was in a ZFS pool before. If that pool is gone and nothing on the disk is needed, clear the label: `zpool labelclear -f " +
				ShellQuote(labelDevice(d, s.Device)) + "` (this destroys the ZFS label), then `wipefs -a " + dev + "`"
		}
	}
	return "if nothing on it is needed, erase its signatures with `wipefs -a " + dev + "` (this destroys the partition table and filesystem labels)"
}

// labelDevice is the device to labelclear: the partition holding the label
// (by-id -partN when the disk has a by-id name), else the disk.
func labelDevice(d disk.Identity, sigDev string) string {
	sigDev = strings.TrimPrefix(sigDev, "/dev/")
	if d.Kernel != "" && sigDev != "" && sigDev != d.Kernel && strings.HasPrefix(sigDev, d.Kernel) {
		num := strings.TrimLeft(strings.TrimPrefix(sigDev, d.Kernel), "p")
		if d.ByID != "" && num != "" {
			return d.ByID + "-part" + num
		}
		return "/dev/" + sigDev
	}
	return devicePath(d)
}

func signatureList(sigs []Signature) string {
	parts := make([]string, len(sigs))
	for i, s := range sigs {
		parts[i] = s.Type + " on " + strings.TrimPrefix(s.Device, "/dev/")
	}
	return strings.Join(parts, ", ")
}

// TargetFor describes leaf of pool p for Candidates, matching the vdev's
// members to disks for their sizes and sector sizes.
func TargetFor(p *zfs.Pool, leaf *zfs.Vdev, disks []disk.Identity) Target {
	t := Target{Pool: p.Name}
	top := topVdevOf(p, leaf)
	if top != nil {
		t.TopVdev = top.Name
	}
	if id, ok := diskOfLeaf(leaf, disks); ok {
		t.Old = &id
	}
	members := []*zfs.Vdev{leaf}
	if top != nil {
		members = top.Leaves()
	}
	for _, m := range members {
		id, ok := diskOfLeaf(m, disks)
		if !ok || id.SizeBytes == 0 {
			continue
		}
		if t.MinSize == 0 || id.SizeBytes < t.MinSize {
			t.MinSize = id.SizeBytes
		}
		if m != leaf && id.LogicalSector > t.MemberLogicalSector {
			t.MemberLogicalSector = id.LogicalSector
		}
	}
	return t
}

// diskOfLeaf finds the disk behind a pool leaf.
func diskOfLeaf(leaf *zfs.Vdev, disks []disk.Identity) (disk.Identity, bool) {
	for _, d := range disks {
		if leafMatchesDisk(leaf, d) {
			return d, true
		}
	}
	return disk.Identity{}, false
}

// topVdevOf returns the top-level vdev (of any class) that holds leaf.
func topVdevOf(p *zfs.Pool, leaf *zfs.Vdev) *zfs.Vdev {
	for _, cv := range p.AllVdevs() {
		for _, l := range cv.Vdev.Leaves() {
			if l == leaf {
				return cv.Vdev
			}
		}
	}
	return nil
}
