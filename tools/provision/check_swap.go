package provision

import (
	"fmt"
	"strings"
)

// checkSwap looks for the disk or its partitions in /proc/swaps: the
// kernel pages to active swap, and a pool written over it corrupts memory.
func (s *inspector) checkSwap(d *DiskInfo) {
	data, err := s.h.ReadFile("/proc/swaps")
	if err != nil {
		s.add(CheckResult{Check: "swap", Subject: d.ID.Kernel, Status: Warn, Reason: "cannot read /proc/swaps: " + err.Error()})
		return
	}
	var hits []string
	for i, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if i == 0 || len(f) < 2 || !strings.HasPrefix(f[0], "/dev/") {
			continue
		}
		if id, err := s.res.Resolve(unescapeMount(f[0]), ""); err == nil && !id.Absent && id.Kernel == d.ID.Kernel {
			hits = append(hits, f[0])
		}
	}
	if len(hits) > 0 {
		s.add(CheckResult{Check: "swap", Subject: d.ID.Kernel, Status: Fail,
			Reason: fmt.Sprintf("%s is in use as swap (%s)", d.ID.Kernel, strings.Join(hits, ", ")),
			Fix:    fmt.Sprintf("if this is the wrong disk, pick another; else swapoff %s and remove it from /etc/fstab", strings.Join(hits, " "))})
		return
	}
	s.add(CheckResult{Check: "swap", Subject: d.ID.Kernel, Status: Pass, Reason: "not used as swap"})
}
