package provision

import (
	"fmt"

	"github.com/zwatch/zwatch/internal/units"
)

// checkRaidz1LargeDisks warns of raidz1 on disks of 4 TB and more: their
// resilver takes a day or more, with no redundancy left meanwhile.
func (s *inspector) checkRaidz1LargeDisks() {
	p := s.p
	if len(p.Vdevs) > 0 && p.Vdevs[0].Layout == LayoutRaidz1 {
		if d := s.diskOf(p.Vdevs[0].Disks[0]); d != nil && d.ID.SizeBytes >= 4e12 {
			s.add(CheckResult{Check: "layout", Subject: p.Pool, Status: Warn,
				Reason: fmt.Sprintf("raidz1 of %s disks: while one disk resilvers (a day or more at this size) the pool has no redundancy left, and one unreadable sector on another disk loses a file", units.Decimal(d.ID.SizeBytes)),
				Fix:    "use raidz2 (or mirrors) for disks of 4 TB and more"})
		}
	}
}
