package provision

import "fmt"

// checkWholeDisk reports each resolved disk as the whole disk it is, with
// its model and serial, so a person sees which physical disk each plan name
// picked before anything is written to it. (The failures of this check come
// from resolveAll.)
func (s *inspector) checkWholeDisk(d *DiskInfo) {
	id := d.ID
	k := id.Kernel
	s.add(CheckResult{Check: "device", Subject: k, Status: Pass,
		Reason: fmt.Sprintf("%s is the whole disk %s (%s)", d.Ref.Name, k, describe(id))})
}
