package provision

import "fmt"

// checkSpecialRedundancy warns of a special vdev less redundant than the
// data vdevs: it holds the pool's metadata, so losing it loses the pool.
func (s *inspector) checkSpecialRedundancy() {
	p := s.p
	dataRed := -1
	for _, v := range p.Vdevs {
		if r := parityOf(v.Layout, len(v.Disks)); dataRed < 0 || r < dataRed {
			dataRed = r
		}
	}
	for i, v := range p.Special {
		if r := parityOf(v.Layout, len(v.Disks)); r < dataRed {
			s.add(CheckResult{Check: "layout", Subject: fmt.Sprintf("special[%d]", i), Status: Warn,
				Reason: fmt.Sprintf("the special vdev survives %d disk failures, the data vdevs %d: when the special vdev is lost, the whole pool is lost", r, dataRed),
				Fix:    "mirror the special vdev at least as widely as the data vdevs are redundant"})
		}
	}
}
