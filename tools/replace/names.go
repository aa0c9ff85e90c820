package replace

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// Directories zpool strips when it prints a device path (libzutil's default
// search paths), longest first so /dev/disk/by-id/ wins over /dev/.
var shownPrefixes = [...]string{
	"/dev/disk/by-vdev/", "/dev/disk/by-id/", "/dev/disk/by-path/",
	"/dev/disk/by-partuuid/", "/dev/disk/by-partlabel/", "/dev/disk/by-uuid/",
	"/dev/disk/by-label/", "/dev/mapper/", "/dev/",
}

// The partition ZFS itself creates on a whole disk on Linux is always
// number 1 (data) with a small number 9 beside it; zpool hides the "-part1",
// "1" or "p1" suffix and prints the disk.
var (
	wholeDiskPart1 = regexp.MustCompile(`^(?:(.+)-part1|((?:sd|vd|xvd|hd)[a-z]+)1|((?:nvme\d+n\d+)|(?:mmcblk\d+))p1)$`)
	anyPartition   = regexp.MustCompile(`^(?:(.+)-part\d+|((?:sd|vd|xvd|hd)[a-z]+)\d+|((?:nvme\d+n\d+)|(?:mmcblk\d+))p\d+|((?:ada|da|nvd|vtbd)\d+)p\d+)$`)
	usbLUN         = regexp.MustCompile(`-\d+:\d+$`)
)

// isGUID reports whether s is a decimal vdev GUID, the form zpool prints for
// a device it cannot open and the one `zpool replace` always accepts.
func isGUID(s string) bool {
	if len(s) < 8 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return err == nil && n != 0
}

// isAbsentState reports whether a leaf in this state has no usable device
// behind it: it was pulled, died, or could not be opened at import.
func isAbsentState(state string) bool {
	return state == zfs.StateRemoved || state == zfs.StateUnavail
}

// stripDevDir drops the directory zpool would not print.
func stripDevDir(p string) string {
	for _, pre := range shownPrefixes {
		if strings.HasPrefix(p, pre) {
			return strings.TrimPrefix(p, pre)
		}
	}
	return p
}

// shownName is a device path the way zpool status prints it: no search
// directory and no whole-disk partition suffix. zpool matches that short
// name against its configuration by expanding it again (zfs_strcmp_shortname
// appends the partition for whole disks), so it is what `zpool replace`
// must be given; the full ".../X-part1" path would not match a whole disk.
func shownName(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	return stripPart1(stripDevDir(p))
}

// stripPart1 turns the name of a whole-disk ZFS partition into the disk's.
func stripPart1(name string) string {
	if m := wholeDiskPart1.FindStringSubmatch(name); m != nil {
		return strutil.FirstNonEmpty(m[1], m[2], m[3])
	}
	return name
}

// wholeDiskKey is the bare name of the disk holding a device path: any
// directory and any partition suffix removed.
func wholeDiskKey(p string) string {
	name := stripDevDir(p)
	if m := anyPartition.FindStringSubmatch(name); m != nil {
		return strutil.FirstNonEmpty(m[1], m[2], m[3], m[4])
	}
	return name
}

// handPartitioned reports whether a vdev path is a partition that someone
// other than ZFS made (boot pools, FreeBSD installs, TrueNAS): the new disk
// must be partitioned the same way before it can take the old one's place.
func handPartitioned(p string) bool {
	if strings.Contains(p, "/by-partuuid/") || strings.Contains(p, "/by-partlabel/") ||
		strings.HasPrefix(p, "gpt/") || strings.HasPrefix(p, "/dev/gpt/") ||
		strings.HasPrefix(p, "gptid/") || strings.HasPrefix(p, "/dev/gptid/") {
		return true
	}
	name := stripDevDir(p)
	return anyPartition.MatchString(name) && !wholeDiskPart1.MatchString(name)
}

// FreeBSD names its disks ada0, da0, nvd0, nda0, vtbd0 and its partitions
// p1..; GEOM labels live under gpt/, gptid/, label/ and diskid/.
var freeBSDDisk = regexp.MustCompile(`^(?:ada|da|nvd|nda|vtbd|mfid|mfisyspd)\d+(?:p\d+)?$`)

// isFreeBSDName reports whether a vdev path has FreeBSD's shape, where
// there is no /dev/disk/by-id, lsblk or ledctl.
func isFreeBSDName(p string) bool {
	n := stripDevDir(p)
	for _, pre := range [...]string{"gpt/", "gptid/", "label/", "diskid/"} {
		if strings.HasPrefix(n, pre) {
			return true
		}
	}
	return freeBSDDisk.MatchString(n)
}

// isKernelName reports whether a shown vdev name is a Linux kernel name,
// which can point at another disk after a reboot or a hot-plug.
func isKernelName(n string) bool {
	return kernelDisk.MatchString(n)
}

var kernelDisk = regexp.MustCompile(`^(?:(?:sd|vd|xvd|hd)[a-z]+|nvme\d+n\d+)$`)

// serialOfByID is the serial at the end of a serial-bearing by-id name
// (ata-MODEL_SERIAL, nvme-MODEL_SERIAL, usb-VENDOR_MODEL_SERIAL-0:0): udev
// turns spaces into underscores and serials have none.
func serialOfByID(name string) string {
	name = usbLUN.ReplaceAllString(wholeDiskKey(name), "")
	for _, p := range [...]string{"ata-", "nvme-", "usb-", "scsi-SATA_", "scsi-S"} {
		if strings.HasPrefix(name, p) {
			i := strings.LastIndexByte(name, '_')
			if i < 0 || i == len(name)-1 {
				return ""
			}
			return name[i+1:]
		}
	}
	return ""
}

// modelOfByID is the model in an ata- or nvme- name, spaces restored.
func modelOfByID(name string) string {
	name = wholeDiskKey(name)
	serial := serialOfByID(name)
	for _, p := range [...]string{"ata-", "nvme-"} {
		if strings.HasPrefix(name, p) && serial != "" {
			m := strings.TrimSuffix(strings.TrimPrefix(name, p), "_"+serial)
			return strings.ReplaceAll(m, "_", " ")
		}
	}
	return ""
}

// leafAbsent reports whether a leaf's device is gone from the system.
func leafAbsent(v *zfs.Vdev) bool {
	return isAbsentState(v.State) || v.Was != "" || isGUID(v.Name)
}

// leafMatchesDisk reports whether the pool leaf v is the disk id. Stable
// names (by-id, WWN, serial) always count; the kernel name only while the
// leaf is present, because a kernel name of a vanished disk is handed to the
// next disk plugged in, quite possibly the replacement.
func leafMatchesDisk(v *zfs.Vdev, id disk.Identity) bool {
	stable, kernel := diskKeys(id)
	for _, p := range []string{v.Name, v.Path, v.Was} {
		if p == "" || isGUID(p) {
			continue
		}
		k := wholeDiskKey(p)
		if stable[k] {
			return true
		}
		if id.Serial != "" && len(id.Serial) >= 4 && serialOfByID(k) == id.Serial {
			return true
		}
		if kernel != "" && k == kernel && !leafAbsent(v) {
			return true
		}
	}
	return false
}

// diskKeys are the bare stable names of a disk, and its kernel name.
func diskKeys(id disk.Identity) (map[string]bool, string) {
	stable := map[string]bool{}
	for _, n := range append([]string{id.ByID}, id.ByIDAll...) {
		if n != "" {
			stable[wholeDiskKey(n)] = true
		}
	}
	if id.WWN != "" {
		stable["wwn-"+strings.ToLower(id.WWN)] = true
	}
	return stable, id.Kernel
}

// sameDisk reports whether a and b are one physical disk, by serial, WWN or
// by-id name; kernel names only when neither has anything stable.
func sameDisk(a, b disk.Identity) bool {
	switch {
	case a.Serial != "" && b.Serial != "":
		return a.Serial == b.Serial
	case a.WWN != "" && b.WWN != "":
		return strings.EqualFold(a.WWN, b.WWN)
	case a.ByID != "" && b.ByID != "":
		return wholeDiskKey(a.ByID) == wholeDiskKey(b.ByID)
	}
	return a.Kernel != "" && a.Kernel == b.Kernel
}

// devicePath is the name to hand to zpool for a whole disk: its by-id path,
// which survives reboots, else its kernel name.
func devicePath(id disk.Identity) string {
	if id.ByID != "" {
		return id.ByID
	}
	if id.Kernel != "" {
		return "/dev/" + id.Kernel
	}
	return ""
}

// matchesDiskName reports whether a name typed by a person (by-id name or
// path, kernel name, /dev/sdX, serial or WWN) names the disk id.
func matchesDiskName(name string, id disk.Identity) bool {
	name = strings.TrimSpace(name)
	if name == "" {
		return false
	}
	if name == id.Serial || (id.WWN != "" && strings.EqualFold(strings.TrimPrefix(name, "0x"), strings.TrimPrefix(id.WWN, "0x"))) {
		return true
	}
	if id.Kernel != "" && (name == id.Kernel || name == "/dev/"+id.Kernel) {
		return true
	}
	stable, _ := diskKeys(id)
	return stable[wholeDiskKey(name)] && !anyPartition.MatchString(stripDevDir(name))
}
