package provision

import (
	"fmt"

	"github.com/zwatch/zwatch/internal/units"
)

// checkSizes compares the disk sizes within a vdev: ZFS uses every disk only
// up to the smallest, so the rest of a larger disk is lost.
func (s *inspector) checkSizes(path string, v VdevSpec) {
	ds := s.vdevDisks(v)
	if len(ds) < 2 {
		return
	}
	lo, hi := ds[0].ID.SizeBytes, ds[0].ID.SizeBytes
	for _, d := range ds {
		lo, hi = min(lo, d.ID.SizeBytes), max(hi, d.ID.SizeBytes)
	}
	if hi == 0 {
		return
	}
	if (hi-lo)*100 <= hi {
		s.add(CheckResult{Check: "sizes", Subject: path, Status: Pass, Reason: fmt.Sprintf("disk sizes within 1 %% of each other (%s)", units.Decimal(lo))})
		return
	}
	var lost uint64
	for _, d := range ds {
		lost += d.ID.SizeBytes - lo
	}
	s.add(CheckResult{Check: "sizes", Subject: path, Status: Warn,
		Reason: fmt.Sprintf("disk sizes differ from %s to %s: every disk of a %s is used only up to the smallest, so %s of raw capacity is lost", units.Decimal(lo), units.Decimal(hi), v.Layout, units.Decimal(lost)),
		Fix:    "use disks of the same size in a vdev; the space comes back (autoexpand=on) once the small disks are replaced"})
}
