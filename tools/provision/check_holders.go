package provision

import (
	"fmt"
	"strings"
)

// checkHolders finds device-mapper, md or bcache devices built on the disk
// (sysfs holders/): such a disk carries LVM, LUKS or RAID data that no
// mount shows.
func (s *inspector) checkHolders(d *DiskInfo) {
	var hits []string
	for _, p := range append([]string{""}, d.Partitions...) {
		dir := "/sys/block/" + d.ID.Kernel
		name := d.ID.Kernel
		if p != "" {
			dir += "/" + p
			name = p
		}
		for _, hname := range readDirNames(s.h, dir+"/holders") {
			hits = append(hits, name+" → "+hname)
		}
	}
	if len(hits) > 0 {
		s.add(CheckResult{Check: "holders", Subject: d.ID.Kernel, Status: Fail,
			Reason: fmt.Sprintf("%s is used by another block device (%s): LVM, LUKS, md RAID or bcache", d.ID.Kernel, strings.Join(hits, ", ")),
			Fix:    "find the owner with `lsblk " + "/dev/" + d.ID.Kernel + "`; stop and remove it (vgchange -an, cryptsetup close, mdadm --stop) only if its data is not needed"})
		return
	}
	s.add(CheckResult{Check: "holders", Subject: d.ID.Kernel, Status: Pass, Reason: "not part of LVM, LUKS, md RAID or bcache"})
}
