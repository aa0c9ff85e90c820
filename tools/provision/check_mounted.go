package provision

import (
	"fmt"
	"path/filepath"
	"strings"
)

// checkMounted looks for the disk or its partitions in /proc/self/mountinfo:
// a mounted filesystem means the disk is in use, most often the wrong disk
// was named.
func (s *inspector) checkMounted(d *DiskInfo) {
	data, err := s.h.ReadFile("/proc/self/mountinfo")
	if err != nil {
		s.add(CheckResult{Check: "mounted", Subject: d.ID.Kernel, Status: Warn, Reason: "cannot read /proc/self/mountinfo: " + err.Error(), Fix: "run on the machine itself, as root"})
		return
	}
	devs := s.devNumbers(d)
	var hits []string
	for _, m := range parseMountinfo(data) {
		name, ok := devs[m.devNumber]
		if !ok && strings.HasPrefix(m.source, "/dev/") {
			if id, err := s.res.Resolve(m.source, ""); err == nil && id.Kernel == d.ID.Kernel && !id.Absent {
				name, ok = filepath.Base(m.source), true
			}
		}
		if ok {
			hits = append(hits, fmt.Sprintf("%s on %s", name, m.mountPoint))
		}
	}
	if len(hits) > 0 {
		s.add(CheckResult{Check: "mounted", Subject: d.ID.Kernel, Status: Fail,
			Reason: fmt.Sprintf("%s is in use: %s mounted", d.ID.Kernel, strings.Join(hits, ", ")),
			Fix:    "this disk holds a mounted filesystem; if it is the wrong disk, pick another; else unmount it and remove it from /etc/fstab first"})
		return
	}
	s.add(CheckResult{Check: "mounted", Subject: d.ID.Kernel, Status: Pass, Reason: "nothing on it is mounted"})
}
