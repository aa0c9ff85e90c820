package provision

import (
	"fmt"

	"github.com/zwatch/zwatch/model/disk"
)

// checkUSB warns of disks behind a USB bridge: SMART often does not pass
// through, and a bus reset drops the disk from the pool mid-write.
func (s *inspector) checkUSB(d *DiskInfo) {
	id := d.ID
	k := id.Kernel
	if id.Transport == disk.TransportUSB {
		s.add(CheckResult{Check: "usb", Subject: k, Status: Warn,
			Reason: fmt.Sprintf("%s is attached through a USB bridge: many bridges do not pass SMART through, and a USB reset drops the disk from the pool mid-write", k),
			Fix:    "prefer SATA or SAS; if USB it must be, use a powered UAS enclosure and check `smartctl -d sat -a " + devOf(id) + "` works"})
	}
}
