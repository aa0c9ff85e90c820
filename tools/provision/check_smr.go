package provision

import (
	"fmt"

	"github.com/zwatch/zwatch/model/disk"
)

// checkSMR warns of drive-managed SMR disks: they look like any other disk
// until a resilver or scrub rewrites them at length, when they stall and
// may be faulted out of the pool.
func (s *inspector) checkSMR(d *DiskInfo) {
	id := d.ID
	k := id.Kernel
	if m, ok := disk.LookupSMR(id.Model); ok {
		s.add(CheckResult{Check: "smr", Subject: k, Status: Warn,
			Reason: fmt.Sprintf("%s is %s %s, a drive-managed SMR disk: under a resilver or scrub it stalls for seconds at a time; resilvers may take days or fail with the disk faulted (source: %s)", id.Model, m.Vendor, m.Family, m.Source),
			Fix:    "use CMR disks for ZFS (WD Red Plus/Pro, Seagate IronWolf, Toshiba N300, enterprise models); keep SMR disks for backups written once"})
	}
}
