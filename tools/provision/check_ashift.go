package provision

import (
	"fmt"
	"math/bits"
)

// AshiftFor is the ashift for a physical sector size: log2, never below 12
// (replacement disks will be 4K-sector even if these are not), at most 16.
func AshiftFor(physical int) int {
	if physical <= 0 {
		return 12
	}
	a := bits.Len(uint(physical)) - 1
	return min(max(a, 12), 16)
}

// diskAshift is the ashift the disks need and the largest sector size
// behind it.
func (s *inspector) diskAshift() (int, int) {
	phys := 0
	for _, d := range s.in.Disks {
		if d.Ref.Class == "cache" {
			continue // L2ARC devices have their own ashift
		}
		phys = max(phys, d.ID.PhysicalSector, d.ID.LogicalSector)
	}
	return AshiftFor(phys), phys
}

// checkAshift checks the planned ashift against the disks' sectors, or
// says which it will be: ashift is fixed for the life of a vdev, and too
// small a one makes every write a read-modify-write.
func (s *inspector) checkAshift() {
	want, phys := s.diskAshift()
	if len(s.in.Disks) == 0 {
		return
	}
	switch {
	case s.p.Ashift != 0 && s.p.Ashift < want:
		s.add(CheckResult{Check: "ashift", Subject: s.p.Pool, Status: Fail,
			Reason: fmt.Sprintf("ashift=%d is below the disks' %d-byte physical sectors (ashift %d): every write would be a read-modify-write, and ashift cannot be changed later", s.p.Ashift, phys, want),
			Fix:    fmt.Sprintf("use ashift %d, or leave ashift out", want)})
	case s.p.Ashift != 0:
		s.add(CheckResult{Check: "ashift", Subject: s.p.Pool, Status: Pass,
			Reason: fmt.Sprintf("ashift=%d as planned (disks' physical sectors %d bytes need %d)", s.p.Ashift, phys, want)})
	case phys < 4096:
		s.add(CheckResult{Check: "ashift", Subject: s.p.Pool, Status: Pass,
			Reason: fmt.Sprintf("physical sectors %d bytes → ashift=%d all the same: disks bought as replacements will have 4K sectors, and ashift cannot be changed later", phys, want)})
	default:
		s.add(CheckResult{Check: "ashift", Subject: s.p.Pool, Status: Pass,
			Reason: fmt.Sprintf("physical sectors %d bytes → ashift=%d", phys, want)})
	}
}
