package disk

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The kinds of name the kernel log gives a disk or the port it sits on
// (kernlog.Ref.Kind).
const (
	PortBlock = "block" // sdb, nvme0n1, vdb, a partition sdb1
	PortATA   = "ata"   // ata3 (the port), ata3.00 (the device on it)
	PortSCSI  = "scsi"  // 2:0:0:0 (host:channel:target:lun), host2 (an adapter: a UAS bridge)
	PortUSB   = "usb"   // 2-1, 2-1.4 (bus-port.port…)
	PortNVMe  = "nvme"  // nvme0 (the controller)
)

// PortMap ties the names the kernel log uses to the disks attached when it
// was read: each disk with the components of the device path its
// /sys/block entry links to, e.g.
// ../devices/pci0000:00/0000:00:13.0/ata1/host0/target0:0:0/0:0:0:0/block/sda.
type PortMap struct {
	disks []portedDisk
}

type portedDisk struct {
	id   Identity
	path []string
}

// IsVirtual tells the kernel names of block devices that are not disks
// (loop, dm-, md, zvols, optical drives…), partitions included.
func IsVirtual(kernel string) bool { return isVirtual(kernel) }

// maxDeparted bounds the disks a map carries over from the previous one.
const maxDeparted = 64

// ReadPorts discovers the disks under root ("/" live) and where each sits.
// Disks of previous (nil at the first read) that are gone now are kept,
// marked Absent, until the next read: the kernel logs "USB disconnect"
// while the disk is leaving, and the log is read after it left.
func ReadPorts(root string, previous *PortMap) (*PortMap, error) {
	ids, err := Discover(root)
	if err != nil {
		return nil, fmt.Errorf("map kernel names to disks: %w", err)
	}
	m := &PortMap{}
	present := map[string]bool{}
	for _, id := range ids {
		link := sysLink(filepath.Join(root, "sys/block", id.Kernel))
		m.disks = append(m.disks, portedDisk{id: id, path: strings.Split(link, "/")})
		present[id.Kernel] = true
	}
	if previous == nil {
		return m, nil
	}
	kept := 0
	for _, d := range previous.disks {
		// Not by serial: USB enclosures can give every disk the same one.
		if d.id.Absent || present[d.id.Kernel] || kept >= maxDeparted {
			continue
		}
		d.id.Absent = true
		m.disks = append(m.disks, d)
		kept++
	}
	return m, nil
}

// Without is the map less the disks, present or departed, under the
// kernel name: the name was just given to a disk the map has not read
// yet, and records that use it are about that one. The map itself is not
// changed, since lookups share it.
func (m *PortMap) Without(kernel string) *PortMap {
	if m == nil {
		return nil
	}
	out := &PortMap{disks: make([]portedDisk, 0, len(m.disks))}
	for _, d := range m.disks {
		if d.id.Kernel == kernel {
			continue
		}
		out.disks = append(out.disks, d)
	}
	return out
}

// Len is the number of disks in the map, departed ones included.
func (m *PortMap) Len() int {
	if m == nil {
		return 0
	}
	return len(m.disks)
}

// Lookup returns the disks a kernel log name of kind (Port*) stands for;
// none when it names nothing known. A port or controller can stand for
// several disks: a USB hub or a bridge with two LUNs, a SATA port
// multiplier. A disk present now wins over a departed one with the same
// kernel name.
func (m *PortMap) Lookup(kind, name string) []Identity {
	if m == nil || name == "" {
		return nil
	}
	var found []portedDisk
	switch kind {
	case PortBlock:
		found = m.byKernel(name)
	case PortATA:
		found = m.byATA(name)
	case PortSCSI:
		found = m.withComponent(name)
	case PortUSB:
		found = m.byUSB(name)
	case PortNVMe:
		found = m.byNVMe(name)
	}
	return present(found)
}

// present keeps the disks attached now when there are any, else the
// departed ones, and returns their identities.
func present(found []portedDisk) []Identity {
	var now, gone []Identity
	for _, d := range found {
		if d.id.Absent {
			gone = append(gone, d.id)
		} else {
			now = append(now, d.id)
		}
	}
	if len(now) > 0 {
		return now
	}
	return gone
}

// byKernel matches a kernel name, or the disk of a partition (sdb1 -> sdb,
// nvme0n1p2 -> nvme0n1).
func (m *PortMap) byKernel(name string) []portedDisk {
	whole := name
	for _, re := range []*regexp.Regexp{kernelPartP, kernelPartN} {
		if sm := re.FindStringSubmatch(name); sm != nil {
			whole = sm[1]
			break
		}
	}
	var out []portedDisk
	for _, d := range m.disks {
		if d.id.Kernel == name {
			return []portedDisk{d}
		}
		if d.id.Kernel == whole {
			out = append(out, d)
		}
	}
	return out
}

// withComponent matches the disks whose device path has name as one whole
// component, so that ata1 is not ata10 and 2:0:0:0 is not 12:0:0:0.
func (m *PortMap) withComponent(name string) []portedDisk {
	var out []portedDisk
	for _, d := range m.disks {
		for _, c := range d.path {
			if c == name {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

var ataDevice = regexp.MustCompile(`^(ata\d+)\.(\d+)$`)

// byATA matches a libata port (ata3) or device (ata3.00, ata3.01). A port
// with several disks (a port multiplier, PATA master and slave) is narrowed
// by the device number: libata gives a disk behind a port multiplier SCSI
// channel = its PMP link, and a PATA slave SCSI id 1 (ata_scsi_scan_host).
func (m *PortMap) byATA(name string) []portedDisk {
	port, devno := name, -1
	if sm := ataDevice.FindStringSubmatch(name); sm != nil {
		port = sm[1]
		devno, _ = strconv.Atoi(sm[2])
	}
	found := m.withComponent(port)
	if len(found) < 2 || devno < 0 {
		return found
	}
	var out []portedDisk
	for _, d := range found {
		ch, id, ok := scsiChannelID(d.path)
		if ok && ((ch == devno && id == 0) || (ch == 0 && id == devno)) {
			out = append(out, d)
		}
	}
	return out
}

var scsiAddr = regexp.MustCompile(`^(\d+):(\d+):(\d+):(\d+)$`)

// scsiChannelID reads the channel and target of the deepest H:C:T:L
// component of a device path.
func scsiChannelID(path []string) (channel, id int, ok bool) {
	for i := len(path) - 1; i >= 0; i-- {
		if sm := scsiAddr.FindStringSubmatch(path[i]); sm != nil {
			channel, _ = strconv.Atoi(sm[2])
			id, _ = strconv.Atoi(sm[3])
			return channel, id, true
		}
	}
	return 0, 0, false
}

var usbDevice = regexp.MustCompile(`^\d+-\d+(\.\d+)*$`)

// byUSB matches a USB device (2-1.4). The disks the device itself carries
// win; a hub (2-1) stands for every disk behind it.
func (m *PortMap) byUSB(name string) []portedDisk {
	found := m.withComponent(name)
	var own []portedDisk
	for _, d := range found {
		if deepestUSB(d.path) == name {
			own = append(own, d)
		}
	}
	if len(own) > 0 {
		return own
	}
	return found
}

// deepestUSB is the USB device a disk's bridge is: the last bus-port
// component before the interface (2-1.4:1.0).
func deepestUSB(path []string) string {
	last := ""
	for _, c := range path {
		if usbDevice.MatchString(c) {
			last = c
		}
	}
	return last
}

var nvmeController = regexp.MustCompile(`^nvme\d+$`)

// byNVMe matches a controller (nvme0) by its path component; with native
// multipath the namespace sits under nvme-subsystem instead, and is matched
// by its name (nvme0n1 for controller nvme0 on a single-controller disk).
func (m *PortMap) byNVMe(name string) []portedDisk {
	if !nvmeController.MatchString(name) {
		return nil
	}
	if found := m.withComponent(name); len(found) > 0 {
		return found
	}
	var out []portedDisk
	for _, d := range m.disks {
		rest, ok := strings.CutPrefix(d.id.Kernel, name+"n")
		if _, err := strconv.Atoi(rest); ok && err == nil {
			out = append(out, d)
		}
	}
	return out
}
