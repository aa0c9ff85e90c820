package replace

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/model/zfs"
)

// device is one leaf of a pool with its context.
type device struct {
	pool   *zfs.Pool
	class  string
	top    *zfs.Vdev
	parent *zfs.Vdev
	leaf   *zfs.Vdev
}

// why says what zpool reports about the device.
func (d device) why() string {
	var parts []string
	parts = append(parts, d.leaf.State)
	if d.leaf.Was != "" {
		parts = append(parts, "was "+d.leaf.Was)
	}
	parts = append(parts, d.leaf.Notes...)
	if n := d.leaf.ReadErrors + d.leaf.WriteErrors + d.leaf.ChecksumErrors; n > 0 {
		parts = append(parts, fmt.Sprintf("errors read %d, write %d, checksum %d",
			d.leaf.ReadErrors, d.leaf.WriteErrors, d.leaf.ChecksumErrors))
	}
	if d.parent != nil && d.parent.Type == zfs.VdevReplacing {
		parts = append(parts, "being replaced ("+d.parent.Name+")")
	}
	return strings.Join(parts, ", ")
}

// allDevices lists every leaf of the data, special, dedup and log vdevs of
// the pools (pool "" for all). Cache and spare devices are not replaced
// with zpool replace.
func allDevices(pools []*zfs.Pool, pool string) []device {
	var out []device
	for _, p := range pools {
		if p == nil || (pool != "" && p.Name != pool) {
			continue
		}
		for _, cv := range p.AllVdevs() {
			if cv.Class == "cache" || cv.Class == "spares" {
				continue
			}
			walk(cv.Vdev, nil, func(leaf, parent *zfs.Vdev) {
				out = append(out, device{pool: p, class: cv.Class, top: cv.Vdev, parent: parent, leaf: leaf})
			})
		}
	}
	return out
}

func walk(v, parent *zfs.Vdev, fn func(leaf, parent *zfs.Vdev)) {
	if v.IsLeaf() {
		fn(v, parent)
		return
	}
	for _, c := range v.Children {
		walk(c, v, fn)
	}
}

// failingDevices are the leaves not ONLINE or with errors. The new half of
// a replacing pair (ONLINE, resilvering) is not failing.
func failingDevices(pools []*zfs.Pool, pool string) []device {
	var out []device
	for _, d := range allDevices(pools, pool) {
		l := d.leaf
		if l.State != zfs.StateOnline || l.ReadErrors+l.WriteErrors+l.ChecksumErrors > 0 {
			out = append(out, d)
		}
	}
	return out
}

// leafNamed reports whether name names leaf: as shown, by GUID, by path or
// was-path, by whole-disk by-id name, or by the serial in that name.
func leafNamed(leaf *zfs.Vdev, name string) bool {
	name = strings.TrimSpace(name)
	if name == "" {
		return false
	}
	if name == leaf.Name || name == leaf.GUID {
		return true
	}
	for _, p := range []string{leaf.Path, leaf.Was} {
		if p == "" {
			continue
		}
		if p == name || shownName(p) == shownName(name) || wholeDiskKey(p) == wholeDiskKey(name) {
			return true
		}
		if s := serialOfByID(p); s != "" && s == name {
			return true
		}
	}
	return serialOfByID(leaf.Name) == name
}
