package replace

import (
	"fmt"
	"strconv"

	"github.com/zwatch/zwatch/model/alert"
)

// minFailedWrites is how many write errors, with few read or checksum
// errors, make "the disk dropped out" the likelier story than a worn disk.
const minFailedWrites = 10

// writesFailing reports whether a's device fails its writes on a vdev with
// no redundancy left, and how many failed. A disk that drops out (a cable,
// power, a USB enclosure) fails every write for a while before ZFS marks it
// REMOVED or suspends its pool; 'keep it connected and replace it' is then
// the wrong first step (make e2e: 4 to 200 000 write errors on a pulled
// single disk before its pool suspended).
func writesFailing(a alert.Alert) (uint64, bool) {
	r := a.Replacement
	if r == nil || r.Margin == nil || *r.Margin > 0 {
		return 0, false
	}
	count := func(k string) uint64 {
		n, _ := strconv.ParseUint(a.Evidence[k], 10, 64)
		return n
	}
	w := count("write")
	return w, w >= minFailedWrites && w > count("read")+count("cksum")
}

// attachedStep comes first when writesFailing: is the disk still there?
func attachedStep(p plan, writes uint64) Step {
	return Step{Title: "Check that the disk is still attached",
		Explanation: fmt.Sprintf("Every write to %s fails (%d write errors) and its vdev has no redundancy to take them. "+
			"That is what a disk that dropped out looks like (cable, power, USB enclosure) before ZFS notices. "+
			"If the list below no longer shows it, reconnect it and resume the pool; if ZFS suspends the pool meanwhile, zwatch sends the steps for that. "+
			"Replace the disk only if it is attached and keeps failing.", p.shown, writes),
		Command: ShellCommand("ls", "-l", "/dev/disk/by-id/"),
		More:    []string{"dmesg -T | tail -n 50", ShellCommand("zpool", "clear", p.pool)},
	}
}
