package provision

import (
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/disk"
)

// Partition names: by-id "-part1", kernel "sda1", "nvme0n1p1", "mmcblk0p1".
var (
	rePartByID   = regexp.MustCompile(`-part\d+$`)
	rePartKernel = regexp.MustCompile(`^(?:(?:nvme\d+n\d+|mmcblk\d+|loop\d+|nbd\d+)p\d+|(?:sd|vd|xvd|hd)[a-z]+\d+)$`)
)

// resolveAll resolves every disk name; it returns the name → by-id map, or
// nil when some disk could not be resolved to a by-id name. Its failures
// are the device, duplicate and by-id checks: a pool must be built from
// whole disks that exist, each named once, by names that survive a reboot.
func (s *inspector) resolveAll() map[string]string {
	names := map[string]string{}
	ok := true
	for _, ref := range s.p.AllDisks() {
		id, err := s.res.Resolve(ref.Name, "")
		if err != nil {
			ok = false
			s.add(CheckResult{Check: "device", Subject: ref.Name, Status: Fail,
				Reason: fmt.Sprintf("%s (%s): no such disk on this machine", ref.Name, ref.Path),
				Fix:    "list the disks with `ls -l /dev/disk/by-id/` or `lsblk -o NAME,MODEL,SERIAL,SIZE` and name one of them"})
			continue
		}
		if id.Absent {
			ok = false
			s.add(CheckResult{Check: "device", Subject: ref.Name, Status: Fail,
				Reason: fmt.Sprintf("%s (%s): the disk %s is not attached now", ref.Name, ref.Path, id.ByID),
				Fix:    "connect the disk, or check the cable and power"})
			continue
		}
		if s.isPartition(ref.Name, id.Kernel) {
			ok = false
			s.add(CheckResult{Check: "device", Subject: id.Kernel, Status: Fail,
				Reason: fmt.Sprintf("%s (%s) is a partition of %s, not a whole disk", ref.Name, ref.Path, id.Kernel),
				Fix:    fmt.Sprintf("give the whole disk (%s): ZFS partitions it itself and then manages its write cache", strutil.FirstNonEmpty(id.ByID, "/dev/"+id.Kernel))})
			continue
		}
		if di, dup := s.byKern[id.Kernel]; dup {
			ok = false
			s.add(CheckResult{Check: "duplicate", Subject: id.Kernel, Status: Fail,
				Reason: fmt.Sprintf("%s (%s) and %s (%s) are the same disk %s", di.Ref.Name, di.Ref.Path, ref.Name, ref.Path, id.Kernel),
				Fix:    "name each disk once; one of the two names is a mistake"})
			di.Names = append(di.Names, ref.Name)
			continue
		}
		s.in.Disks = append(s.in.Disks, DiskInfo{Names: []string{ref.Name}, Ref: ref, ID: id, Partitions: s.partitions(id.Kernel)})
		s.byKern[id.Kernel] = &s.in.Disks[len(s.in.Disks)-1]
		if id.ByID == "" {
			ok = false
			s.add(CheckResult{Check: "by-id", Subject: id.Kernel, Status: Fail,
				Reason: fmt.Sprintf("%s has no /dev/disk/by-id name: a pool made of kernel names breaks when they change at boot", id.Kernel),
				Fix:    "check that udev runs; a virtual disk needs a serial number (QEMU: -device ...,serial=XYZ)"})
			continue
		}
		names[ref.Name] = id.ByID
	}
	// s.byKern points into s.in.Disks: rebuild after appends moved it.
	for i := range s.in.Disks {
		s.byKern[s.in.Disks[i].ID.Kernel] = &s.in.Disks[i]
	}
	if !ok {
		return nil
	}
	return names
}

// isPartition reports whether name, as written, is a partition of kernel.
func (s *inspector) isPartition(name, kernel string) bool {
	base := filepath.Base(name)
	if rePartByID.MatchString(base) {
		return true
	}
	for _, p := range disk.CandidatePaths(name) {
		t, err := filepath.EvalSymlinks(filepath.Join(s.h.Root(), p))
		if err == nil {
			return filepath.Base(t) != kernel
		}
	}
	return rePartKernel.MatchString(base) && base != kernel
}
