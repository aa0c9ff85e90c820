package daemon

import (
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// Member says where a disk sits: its pool and top-level vdev (or the class,
// logs/cache/spares, for a leaf that is its own top-level vdev).
type Member struct {
	Pool, Vdev string
}

// DiskMembership maps disk serials to their place in the pools, resolving
// every leaf vdev path (by-id, sdX, partitions, GUID with `was`) to a disk.
func DiskMembership(pools []*zfs.Pool, res *disk.Resolver) map[string]Member {
	out := map[string]Member{}
	for _, p := range pools {
		for _, cv := range p.AllVdevs() {
			top := cv.Vdev.Name
			if cv.Vdev.IsLeaf() {
				top = cv.Class
			}
			for _, l := range cv.Vdev.Leaves() {
				path := l.Path
				if path == "" {
					path = l.Name
				}
				if id, err := res.Resolve(path, l.Was); err == nil && id.Serial != "" {
					out[id.Serial] = Member{Pool: p.Name, Vdev: top}
				}
			}
		}
	}
	return out
}
