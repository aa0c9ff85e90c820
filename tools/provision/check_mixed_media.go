package provision

import "fmt"

// checkMixedMedia warns of a vdev mixing SSDs with spinning disks: a vdev
// runs at the speed of its slowest member.
func (s *inspector) checkMixedMedia(path string, v VdevSpec) {
	ds := s.vdevDisks(v)
	ssd, hdd := 0, 0
	for _, d := range ds {
		if d.ID.RotationRPM == 0 {
			ssd++
		} else {
			hdd++
		}
	}
	if ssd > 0 && hdd > 0 {
		s.add(CheckResult{Check: "mixed-media", Subject: path, Status: Warn,
			Reason: fmt.Sprintf("%s mixes %d SSDs with %d spinning disks: it runs at the speed of the slowest", path, ssd, hdd),
			Fix:    "keep SSDs and spinning disks in separate vdevs (SSDs make a good special vdev)"})
	}
}
