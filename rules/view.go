package rules

import (
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// What the status page needs of the rules' own reading of a pool, so that the
// page and the alerts never disagree.

// PoolMargin is how many more device failures pool p survives: the least
// over its data, special, dedup and log vdevs, and that in words ("can lose
// 1 more disk"); ok is false when no vdev of p has a margin to tell.
func PoolMargin(p *zfs.Pool) (left int, text string, ok bool) {
	for _, cv := range marginTops(p) {
		l, _, has := margin(cv.Vdev)
		if !has {
			continue
		}
		if !ok || l < left {
			left, ok = l, true
		}
	}
	if !ok {
		return 0, "", false
	}
	return left, marginText(left), true
}

// MatchesDisk reports whether vdev path p names the disk id (or device, the
// path smartctl read it by), the way the rules join a vdev to its disk.
func MatchesDisk(p string, id disk.Identity, device string) bool { return matchesDisk(p, id, device) }

// IdentityOfReport is the disk identity a SMART report tells.
func IdentityOfReport(r *smart.Report) disk.Identity { return identityOf(r) }
