package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/zwatch/zwatch/internal/strutil"
)

// ErrNotFound is returned when a vdev path names no disk zwatch can find.
var ErrNotFound = errors.New("disk not found")

// Partition name forms: by-id "-part1", kernel "sda1", "nvme0n1p1", "mmcblk0p1".
var (
	partSuffix  = regexp.MustCompile(`-part\d+$`)
	kernelPartP = regexp.MustCompile(`^((?:nvme\d+n\d+)|(?:mmcblk\d+)|(?:nbd\d+)|(?:loop\d+))p\d+$`)
	kernelPartN = regexp.MustCompile(`^([a-z]+)\d+$`)
	guidOnly    = regexp.MustCompile(`^\d{6,20}$`)
)

// Resolver maps the device paths ZFS prints for vdevs to disks.
type Resolver struct {
	root string
	ids  []Identity
}

// NewResolver resolves against the disks in ids (from Discover) and the
// symlinks under root ("/" live).
func NewResolver(root string, ids []Identity) *Resolver {
	return &Resolver{root: root, ids: ids}
}

// Resolve finds the disk behind a vdev path: a by-id, by-path, by-partuuid
// or by-vdev name (with or without /dev/disk/...), /dev/sdX, a partition of
// any of these, a bare kernel name, a serial number or a WWN.
//
// A vdev that zpool status shows only by GUID (its device is gone) resolves
// through was, the path in "was /dev/...", when given. A was path to a by-id
// name that no longer exists yields an Identity built from the name alone,
// with Absent set. A was path of a kernel name (/dev/sdc) resolves to
// whatever disk holds that name now, which may be a replacement.
func (r *Resolver) Resolve(vdev, was string) (Identity, error) {
	vdev = strings.TrimSpace(vdev)
	if vdev == "" {
		return Identity{}, fmt.Errorf("empty vdev path: %w", ErrNotFound)
	}
	if guidOnly.MatchString(vdev) {
		if was == "" || guidOnly.MatchString(strings.TrimSpace(was)) {
			return Identity{}, fmt.Errorf("vdev %s is a GUID with no device path: %w", vdev, ErrNotFound)
		}
		return r.Resolve(was, "")
	}
	if id, ok := r.byStableID(vdev); ok {
		return id, nil
	}
	for _, p := range CandidatePaths(vdev) {
		if k := resolveKernel(r.root, p); k != "" {
			if id, ok := r.byKernel(k); ok {
				return id, nil
			}
		}
	}
	if id, ok := r.fromByIDName(vdev); ok {
		return id, nil
	}
	return Identity{}, fmt.Errorf("vdev %s: %w", vdev, ErrNotFound)
}

// byStableID matches a serial number, a WWN or a by-id name known at
// discovery, without touching the filesystem.
func (r *Resolver) byStableID(s string) (Identity, bool) {
	base := partSuffix.ReplaceAllString(filepath.Base(s), "")
	for _, id := range r.ids {
		if (id.Serial != "" && s == id.Serial) || (id.WWN != "" && strings.EqualFold(s, id.WWN)) {
			return id, true
		}
		for _, n := range id.ByIDAll {
			if filepath.Base(n) == base && (!strings.Contains(s, "/") || strings.HasPrefix(s, ByIDDir+"/")) {
				return id, true
			}
		}
	}
	return Identity{}, false
}

func (r *Resolver) byKernel(k string) (Identity, bool) {
	for _, id := range r.ids {
		if id.Kernel == k {
			return id, true
		}
	}
	return Identity{}, false
}

// fromByIDName handles a serial-bearing or wwn- by-id name whose link is
// gone: the disk is matched by the serial or WWN in the name, or described
// from the name alone and marked Absent.
func (r *Resolver) fromByIDName(s string) (Identity, bool) {
	if strings.Contains(s, "/") && !strings.HasPrefix(s, ByIDDir+"/") {
		return Identity{}, false
	}
	name := partSuffix.ReplaceAllString(filepath.Base(s), "")
	id := Identity{ByID: filepath.Join(ByIDDir, name), ByIDAll: []string{filepath.Join(ByIDDir, name)}, Absent: true}
	switch {
	case strings.HasPrefix(name, "wwn-"):
		id.WWN = strings.ToLower(strings.TrimPrefix(name, "wwn-"))
	case byIDRank(name) == 0:
		id.Serial = serialFromByID(name)
		id.Model = modelFromByID(name, id.Serial)
		id.Transport = transportOfByID(name)
	default:
		return Identity{}, false
	}
	if id.Serial == "" && id.WWN == "" {
		return Identity{}, false
	}
	if live, ok := r.byStableID(strutil.FirstNonEmpty(id.Serial, id.WWN)); ok {
		return live, true
	}
	return id, true
}

func transportOfByID(name string) string {
	switch {
	case strings.HasPrefix(name, "ata-"), strings.HasPrefix(name, "scsi-SATA_"):
		return TransportSATA
	case strings.HasPrefix(name, "nvme-"):
		return TransportNVMe
	case strings.HasPrefix(name, "usb-"):
		return TransportUSB
	}
	return ""
}

// CandidatePaths lists where a name without a directory may live: zpool
// status prints by-id names, kernel names and by-vdev aliases bare, and a
// person names disks the same way. An absolute path is its only candidate.
func CandidatePaths(s string) []string {
	if strings.HasPrefix(s, "/") {
		return []string{s}
	}
	out := []string{"/dev/" + s}
	for _, d := range [...]string{"by-id", "by-path", "by-partuuid", "by-uuid", "by-vdev", "by-partlabel"} {
		out = append(out, "/dev/disk/"+d+"/"+s)
	}
	return out
}

// resolveKernel follows a /dev path under root to its kernel name and maps
// a partition to its disk; "" when it leads nowhere or out of root.
func resolveKernel(root, devPath string) string {
	target, err := filepath.EvalSymlinks(filepath.Join(root, devPath))
	if err != nil {
		// /dev/<name> without a node (a sysfs-only fixture, a container
		// without /dev): the kernel name itself still names the disk.
		if dir, name := filepath.Split(devPath); dir == "/dev/" {
			return diskOf(root, name)
		}
		return ""
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	devDir := filepath.Join(absRoot, "dev")
	if t, err := filepath.Abs(target); err != nil || !strings.HasPrefix(t, devDir+string(filepath.Separator)) {
		return "" // an absolute link escaping a fixture tree, or not a device
	}
	return diskOf(root, filepath.Base(target))
}

// diskOf maps a kernel name to its whole disk: itself when it is one, the
// parent for a partition (sda1 -> sda, nvme0n1p1 -> nvme0n1).
func diskOf(root, kernel string) string {
	if isDisk(root, kernel) {
		return kernel
	}
	for _, re := range []*regexp.Regexp{kernelPartP, kernelPartN} {
		if m := re.FindStringSubmatch(kernel); m != nil && isDisk(root, m[1]) {
			return m[1]
		}
	}
	return ""
}

func isDisk(root, kernel string) bool {
	if kernel == "" || strings.ContainsAny(kernel, "/\\") {
		return false
	}
	_, err := os.Stat(filepath.Join(root, "sys/block", kernel))
	return err == nil
}
