package disk

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/internal/strutil"
)

// ByIDDir is where udev keeps the stable names of disks.
const ByIDDir = "/dev/disk/by-id"

// Discover lists the physical disks of the machine whose filesystem is at
// root ("/" for the live system, a fixture tree in tests). It reads
// root/sys/block and root/dev/disk/by-id only; nothing is opened or spun up.
// Virtual block devices (loop, zram, dm, md, zvols) and empty slots (size 0)
// are left out.
func Discover(root string) ([]Identity, error) {
	entries, err := os.ReadDir(filepath.Join(root, "sys/block"))
	if err != nil {
		return nil, fmt.Errorf("discover disks: %w", err)
	}
	links, err := byIDLinks(root)
	if err != nil {
		return nil, fmt.Errorf("discover disks: %w", err)
	}
	ids := []Identity{}
	for _, e := range entries {
		id, ok := readDisk(root, e.Name())
		if !ok {
			continue
		}
		applyByID(&id, links[id.Kernel])
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].Kernel < ids[j].Kernel })
	return ids, nil
}

// isVirtual tells kernel names of block devices that are not disks.
func isVirtual(name string) bool {
	for _, p := range [...]string{"loop", "ram", "zram", "dm-", "md", "sr", "nbd", "zd", "fd"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	// eMMC boot and RPMB areas are listed beside the card but are not disks.
	return strings.HasPrefix(name, "mmcblk") && (strings.Contains(name, "boot") || strings.Contains(name, "rpmb"))
}

// readDisk reads one /sys/block entry; ok is false for what is not a disk.
func readDisk(root, name string) (Identity, bool) {
	if isVirtual(name) {
		return Identity{}, false
	}
	sys := filepath.Join(root, "sys/block", name)
	sectors, err := readUint(filepath.Join(sys, "size"))
	if err != nil || sectors == 0 {
		return Identity{}, false
	}
	dev := filepath.Join(sys, "device")
	id := Identity{
		Kernel:         name,
		SizeBytes:      sectors * 512, // sysfs size is always in 512-byte units
		LogicalSector:  readInt(filepath.Join(sys, "queue/logical_block_size")),
		PhysicalSector: readInt(filepath.Join(sys, "queue/physical_block_size")),
		RotationRPM:    rotation(filepath.Join(sys, "queue/rotational")),
		Removable:      readTrim(filepath.Join(sys, "removable")) == "1",
		Model:          readTrim(filepath.Join(dev, "model")),
		Firmware:       strutil.FirstNonEmpty(readTrim(filepath.Join(dev, "firmware_rev")), readTrim(filepath.Join(dev, "rev"))),
		Transport:      transportOfSysPath(sysLink(sys)),
		Port:           portOfSysPath(sysLink(sys)),
	}
	wwid := strutil.FirstNonEmpty(readTrim(filepath.Join(sys, "wwid")), readTrim(filepath.Join(dev, "wwid")))
	id.WWN = wwnFromWWID(wwid)
	id.Serial = strutil.FirstNonEmpty(
		readTrim(filepath.Join(dev, "serial")), // NVMe controller
		readTrim(filepath.Join(sys, "serial")), // virtio-blk
		vpdSerial(filepath.Join(dev, "vpd_pg80")),
		t10Serial(wwid),
	)
	return id, true
}

// sysLink is where /sys/block/<dev> points, e.g.
// ../devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sda.
func sysLink(sys string) string {
	l, err := os.Readlink(sys)
	if err != nil {
		return ""
	}
	return l
}

// transportOfSysPath tells the bus from the device path: USB first, since a
// USB bridge can carry SATA or NVMe behind it; virtio last, since a
// virtio-scsi HBA (…/virtio0/host0/…) carries SCSI disks.
func transportOfSysPath(p string) string {
	switch {
	case strings.Contains(p, "/usb"):
		return TransportUSB
	case strings.Contains(p, "/nvme"):
		return TransportNVMe
	case strings.Contains(p, "/ata"):
		return TransportSATA
	case strings.Contains(p, "/end_device-"), strings.Contains(p, "/sas_"), strings.Contains(p, "/expander-"):
		return TransportSAS
	case strings.Contains(p, "/host"):
		return TransportSCSI
	case strings.Contains(p, "/virtio"):
		return TransportVirt
	}
	return ""
}

// portOfSysPath names where the disk is plugged in, for a person looking
// for its bay: the SATA port (ata3), the USB port (usb 2-1.4), the NVMe
// controller and its PCI slot, or the SCSI address; "" when the path says
// none of these (a virtio disk in a VM says its PCI slot).
func portOfSysPath(p string) string {
	parts := strings.Split(p, "/")
	var pci, ata, scsi, nvme string
	for _, c := range parts {
		switch {
		case pciSlot.MatchString(c):
			pci = c
		case ataPort.MatchString(c):
			ata = c
		case scsiAddress.MatchString(c):
			scsi = c
		case nvmeController.MatchString(c) && nvme == "":
			nvme = c
		}
	}
	switch {
	case strings.Contains(p, "/usb"):
		if u := deepestUSB(parts); u != "" {
			return "usb " + u
		}
	case nvme != "":
		return strings.TrimSpace(nvme + " pci " + pci)
	case ata != "":
		return ata
	case scsi != "":
		return "scsi " + scsi
	case strings.Contains(p, "/virtio") && pci != "":
		return "virtio pci " + pci
	}
	return ""
}

var (
	pciSlot     = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)
	ataPort     = regexp.MustCompile(`^ata\d+$`)
	scsiAddress = regexp.MustCompile(`^\d+:\d+:\d+:\d+$`)
)

func rotation(path string) int {
	switch readTrim(path) {
	case "0":
		return 0
	default:
		return -1 // spinning at an unknown speed, or not reported
	}
}

// wwnFromWWID keeps the WWN forms Linux also uses in by-id names:
// naa.5000c500... -> 0x5000c500..., and an NVMe eui.<hex> as is.
func wwnFromWWID(wwid string) string {
	switch {
	case strings.HasPrefix(wwid, "naa."):
		return "0x" + strings.ToLower(strings.TrimPrefix(wwid, "naa."))
	case strings.HasPrefix(wwid, "eui."):
		return strings.ToLower(wwid)
	}
	return ""
}

// t10Serial takes the serial from a T10 vendor id wwid
// ("t10.ATA     <model>   <serial>"), its last field.
func t10Serial(wwid string) string {
	if !strings.HasPrefix(wwid, "t10.") {
		return ""
	}
	f := strings.Fields(wwid)
	if len(f) < 2 {
		return ""
	}
	return f[len(f)-1]
}

// vpdSerial reads the Unit Serial Number VPD page (0x80): a 4-byte header,
// byte 3 the length, then the serial, often space padded.
func vpdSerial(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 4 || b[1] != 0x80 {
		return ""
	}
	n := int(b[3])
	if 4+n > len(b) {
		n = len(b) - 4
	}
	return strings.TrimSpace(string(bytes.Trim(b[4:4+n], "\x00")))
}

// byIDLinks maps each whole disk's kernel name to its by-id names. A root
// without /dev/disk/by-id (no udev, a container) is not an error.
func byIDLinks(root string) (map[string][]string, error) {
	dir := filepath.Join(root, ByIDDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		name := e.Name()
		if partSuffix.MatchString(name) {
			continue
		}
		kernel := resolveKernel(root, filepath.Join(ByIDDir, name))
		if kernel == "" || !isDisk(root, kernel) {
			continue
		}
		out[kernel] = append(out[kernel], name)
	}
	return out, nil
}

// applyByID records a disk's by-id names and fills what sysfs lacked from
// the serial-bearing name (ATA disks show a 16-character SCSI model in sysfs;
// udev's name carries the full one).
func applyByID(id *Identity, names []string) {
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	best := preferredByID(names)
	id.ByID = filepath.Join(ByIDDir, best)
	for _, n := range names {
		id.ByIDAll = append(id.ByIDAll, filepath.Join(ByIDDir, n))
		if id.WWN == "" && strings.HasPrefix(n, "wwn-") {
			id.WWN = strings.ToLower(strings.TrimPrefix(n, "wwn-"))
		}
	}
	if byIDRank(best) != 0 {
		return
	}
	if id.Serial == "" {
		id.Serial = serialFromByID(best)
	}
	if full := modelFromByID(best, id.Serial); full != "" && strings.HasPrefix(full, id.Model) {
		id.Model = full
	}
}

// preferredByID picks the name a person should see: serial-bearing first,
// then wwn-, then opaque ones; the shortest wins a tie (newer udev adds a
// second nvme- name with a _1 namespace suffix).
func preferredByID(names []string) string {
	best := ""
	for _, n := range names {
		if best == "" || byIDRank(n) < byIDRank(best) ||
			(byIDRank(n) == byIDRank(best) && len(n) < len(best)) {
			best = n
		}
	}
	return best
}

func byIDRank(name string) int {
	switch {
	case strings.HasPrefix(name, "nvme-eui."), strings.HasPrefix(name, "nvme-nvme."), strings.HasPrefix(name, "nvme-uuid."):
		return 2
	case strings.HasPrefix(name, "ata-"), strings.HasPrefix(name, "nvme-"), strings.HasPrefix(name, "usb-"),
		strings.HasPrefix(name, "scsi-S"), strings.HasPrefix(name, "virtio-"), strings.HasPrefix(name, "mmc-"):
		return 0
	case strings.HasPrefix(name, "wwn-"):
		return 1
	}
	return 2 // scsi-0…, scsi-1…, scsi-3… (same hex as wwn-), anything else
}

// usbInstance is the "-0:0" LUN suffix udev appends to usb- names.
var usbInstance = regexp.MustCompile(`-\d+:\d+$`)

// idSerial is the ID_SERIAL part of a serial-bearing by-id name.
func idSerial(name string) string {
	for _, p := range [...]string{"ata-", "nvme-", "usb-", "scsi-SATA_", "scsi-S", "virtio-", "mmc-"} {
		if strings.HasPrefix(name, p) {
			return usbInstance.ReplaceAllString(strings.TrimPrefix(name, p), "")
		}
	}
	return ""
}

// serialFromByID takes the serial from ata-MODEL_SERIAL style names: the
// part after the last underscore (udev turns spaces into underscores, and
// serials have none).
func serialFromByID(name string) string {
	s := idSerial(name)
	if strings.HasPrefix(name, "virtio-") {
		return s // virtio-<serial>, no model
	}
	i := strings.LastIndexByte(s, '_')
	if i < 0 || i == len(s)-1 {
		return ""
	}
	return s[i+1:]
}

// modelFromByID is the model part of an ata-/nvme- name with underscores
// turned back into spaces.
func modelFromByID(name, serial string) string {
	if serial == "" || !(strings.HasPrefix(name, "ata-") || strings.HasPrefix(name, "nvme-")) {
		return ""
	}
	s := strings.TrimSuffix(idSerial(name), "_"+serial)
	if s == idSerial(name) {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(s, "_", " "))
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(bytes.Trim(b, "\x00")))
}

func readUint(path string) (uint64, error) {
	s := readTrim(path)
	if s == "" {
		return 0, fmt.Errorf("read %s: empty or missing", path)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return v, nil
}

func readInt(path string) int {
	v, err := strconv.Atoi(readTrim(path))
	if err != nil {
		return 0
	}
	return v
}
