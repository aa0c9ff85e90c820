package disk

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// portsTree is one machine with the device paths of four real disks
// (testdata/sysfs/SOURCES.md, "Port mapping"): SATA on ata1, two USB
// enclosures on hub 2-1 (ports 2 and 4), NVMe controller nvme0. The
// attribute values are constructed.
const (
	sataPath = "../devices/pci0000:00/0000:00:13.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
	usb2Path = "../devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/usb2/2-1/2-1.2/2-1.2:1.0/host1/target1:0:0/1:0:0:0/block/sdc"
	usb4Path = "../devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/usb2/2-1/2-1.4/2-1.4:1.0/host2/target2:0:0/2:0:0:0/block/sdd"
	nvmePath = "../devices/pci0000:00/0000:00:01.0/0000:0e:00.0/nvme/nvme0/nvme0n1"
)

func portsTree(t *testing.T) string {
	t.Helper()
	size := map[string]string{"size": "250069680\n", "removable": "0\n"}
	return buildTree(t, "sysfs/ports-by-id-derived.txt", []fakeDisk{
		{kernel: "sda", sysPath: sataPath,
			attrs: size, devLink: "../../../0:0:0:0", parts: []string{"sda4"}},
		{kernel: "sdc", sysPath: usb2Path,
			attrs: size, devLink: "../../../1:0:0:0"},
		{kernel: "sdd", sysPath: usb4Path,
			attrs: size, devLink: "../../../2:0:0:0"},
		{kernel: "nvme0n1", sysPath: nvmePath,
			attrs: size, devLink: "../../nvme0",
			devAttr: map[string]string{"serial": "S27GNY0H939193      \n", "model": "SAMSUNG MZVPV256HDGL-000H1              \n"},
			parts:   []string{"nvme0n1p1"}},
	})
}

func kernels(ids []Identity) []string {
	var out []string
	for _, id := range ids {
		out = append(out, id.Kernel)
	}
	slices.Sort(out)
	return out
}

func TestPortLookup(t *testing.T) {
	m, err := ReadPorts(portsTree(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 4 {
		t.Fatalf("map has %d disks, want 4", m.Len())
	}
	for _, c := range []struct {
		kind, name string
		want       []string
	}{
		{PortBlock, "sda", []string{"sda"}},
		{PortBlock, "sda4", []string{"sda"}},
		{PortBlock, "nvme0n1p1", []string{"nvme0n1"}},
		{PortBlock, "sdz", nil},
		{PortATA, "ata1", []string{"sda"}},
		{PortATA, "ata1.00", []string{"sda"}},
		{PortATA, "ata10", nil}, // a whole component, not a prefix
		{PortATA, "ata2", nil},
		{PortSCSI, "0:0:0:0", []string{"sda"}},
		{PortSCSI, "1:0:0:0", []string{"sdc"}},
		{PortSCSI, "2:0:0:0", []string{"sdd"}},
		{PortSCSI, "10:0:0:0", nil},
		{PortSCSI, "host1", []string{"sdc"}}, // "scsi host1: uas_eh_device_reset_handler": the UAS bridge
		{PortSCSI, "host0", []string{"sda"}},
		{PortSCSI, "host3", nil},
		{PortUSB, "2-1.2", []string{"sdc"}},
		{PortUSB, "2-1.4", []string{"sdd"}},
		{PortUSB, "2-1", []string{"sdc", "sdd"}}, // the hub: every disk behind it
		{PortUSB, "2-1.1", nil},
		{PortUSB, "2-1.20", nil},
		{PortUSB, "1-1", nil},
		{PortNVMe, "nvme0", []string{"nvme0n1"}},
		{PortNVMe, "nvme1", nil},
		{PortNVMe, "nvme0n1", nil}, // a namespace is a block name, not a controller
		{"pci", "0000:00:13.0", nil},
		{PortBlock, "", nil},
	} {
		if got := kernels(m.Lookup(c.kind, c.name)); !slices.Equal(got, c.want) {
			t.Errorf("Lookup(%s, %s) = %v, want %v", c.kind, c.name, got, c.want)
		}
	}
	ids := m.Lookup(PortUSB, "2-1.2")
	if len(ids) != 1 || ids[0].Serial != "20170331000C3" || ids[0].ByID != ByIDDir+"/usb-External_USB3.0_DISK00_20170331000C3-0:0" {
		t.Errorf("2-1.2 = %+v, want the enclosure's serial and by-id name", ids)
	}
	if ids := m.Lookup(PortNVMe, "nvme0"); len(ids) != 1 || ids[0].Serial != "S27GNY0H939193" {
		t.Errorf("nvme0 = %+v, want serial S27GNY0H939193", ids)
	}
	if ids := m.Lookup(PortATA, "ata1"); len(ids) != 1 || ids[0].Serial != "S2DNNXAGC27736" || ids[0].WWN != "0x5002538740152efa" || ids[0].Transport != TransportSATA {
		t.Errorf("ata1 = %+v, want serial, WWN and transport from the tree", ids)
	}
	var none *PortMap
	if none.Lookup(PortBlock, "sda") != nil || none.Len() != 0 {
		t.Error("a nil map must name nothing")
	}
}

// A disk that left is still named by the next map, marked Absent, so that
// the "USB disconnect" read after it left names it; the map after that
// forgets it. A new disk under the same kernel name wins.
func TestPortsKeepDepartedOneRead(t *testing.T) {
	root := portsTree(t)
	first, err := ReadPorts(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "sys/block/sdd")); err != nil {
		t.Fatal(err)
	}
	second, err := ReadPorts(root, first)
	if err != nil {
		t.Fatal(err)
	}
	ids := second.Lookup(PortUSB, "2-1.4")
	if len(ids) != 1 || ids[0].Kernel != "sdd" || !ids[0].Absent || ids[0].Serial == "" {
		t.Fatalf("departed sdd = %+v, want it named and Absent", ids)
	}
	if got := kernels(second.Lookup(PortUSB, "2-1")); !slices.Equal(got, []string{"sdc"}) {
		t.Errorf("hub 2-1 = %v, want the disk still there only", got)
	}
	third, err := ReadPorts(root, second)
	if err != nil {
		t.Fatal(err)
	}
	if ids := third.Lookup(PortUSB, "2-1.4"); ids != nil {
		t.Errorf("third map still names sdd: %+v", ids)
	}
}

// A name the kernel gave to a new disk stops naming the disk, present or
// departed, that had it; the map lookups share is left as it was.
func TestPortsWithout(t *testing.T) {
	root := portsTree(t)
	first, err := ReadPorts(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "sys/block/sdd")); err != nil {
		t.Fatal(err)
	}
	second, err := ReadPorts(root, first) // sdd departed
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sda", "sdd"} {
		m := second.Without(name)
		if ids := m.Lookup(PortBlock, name); ids != nil {
			t.Errorf("Without(%s) still names %+v", name, ids)
		}
		if got := kernels(m.Lookup(PortUSB, "2-1")); !slices.Equal(got, []string{"sdc"}) {
			t.Errorf("Without(%s): hub 2-1 = %v, want sdc", name, got)
		}
		if m.Len() != second.Len()-1 {
			t.Errorf("Without(%s) has %d disks, want %d", name, m.Len(), second.Len()-1)
		}
	}
	if ids := second.Lookup(PortBlock, "sda"); len(ids) != 1 {
		t.Errorf("Without changed the map it was called on: sda = %+v", ids)
	}
	if (*PortMap)(nil).Without("sda") != nil {
		t.Error("Without of no map is a map")
	}
}

// The Firecracker capture: a virtio disk names itself; loop and zram are
// not disks.
func TestPortsCapturedVirtio(t *testing.T) {
	m, err := ReadPorts("../../testdata/sysfs/firecracker-virtio-vda", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := kernels(m.Lookup(PortBlock, "vda")); !slices.Equal(got, []string{"vda"}) {
		t.Errorf("vda = %v", got)
	}
	if ids := m.Lookup(PortBlock, "loop0"); ids != nil {
		t.Errorf("loop0 = %+v, want nothing", ids)
	}
	if _, err := ReadPorts(t.TempDir(), nil); err == nil {
		t.Error("a root without /sys/block must be an error")
	}
}

// The live machine's own sysfs: every disk Discover finds is named by its
// kernel name.
func TestPortsLiveSysfs(t *testing.T) {
	ids, err := Discover("/")
	if err != nil || len(ids) == 0 {
		t.Skipf("no disks to map here: %v", err)
	}
	m, err := ReadPorts("/", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if got := m.Lookup(PortBlock, id.Kernel); len(got) != 1 || got[0].Kernel != id.Kernel {
			t.Errorf("Lookup(block, %s) = %+v", id.Kernel, got)
		}
	}
}

// Any name the kernel log hands over (Classify's output of any line) is
// looked up without a panic, and a found disk carries the name it matched.
func FuzzPortLookup(f *testing.F) {
	for _, s := range []string{"sda", "sda4", "ata1.00", "ata1.15", "0:0:0:0", "2-1", "2-1.4", "nvme0", "nvme0n", "", "2-1.4:1.0", "ata", "p1"} {
		f.Add(PortBlock, s)
		f.Add(PortATA, s)
		f.Add(PortUSB, s)
		f.Add(PortNVMe, s)
		f.Add(PortSCSI, s)
	}
	m := &PortMap{}
	for kernel, p := range map[string]string{"sda": sataPath, "sdc": usb2Path, "sdd": usb4Path, "nvme0n1": nvmePath} {
		m.disks = append(m.disks, portedDisk{id: Identity{Kernel: kernel}, path: strings.Split(p, "/")})
	}
	f.Fuzz(func(t *testing.T, kind, name string) {
		for _, id := range m.Lookup(kind, name) {
			if id.Kernel == "" {
				t.Fatalf("Lookup(%q, %q) gave a disk without a kernel name", kind, name)
			}
		}
	})
}

// The narrowing rules, on constructed device paths (shaped like the real
// ones above, not captured): two disks behind one SATA port multiplier
// (libata: SCSI channel = PMP link), and an NVMe namespace under a native
// multipath subsystem, which has no controller in its path.
func TestPortNarrowing(t *testing.T) {
	m := &PortMap{}
	for kernel, p := range map[string]string{
		"sdb":     "../devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sdb",
		"sdc":     "../devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:1:0/2:1:0:0/block/sdc",
		"nvme1n1": "../devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1",
	} {
		m.disks = append(m.disks, portedDisk{id: Identity{Kernel: kernel}, path: strings.Split(p, "/")})
	}
	for _, c := range []struct {
		kind, name string
		want       []string
	}{
		{PortATA, "ata3", []string{"sdb", "sdc"}},
		{PortATA, "ata3.00", []string{"sdb"}},
		{PortATA, "ata3.01", []string{"sdc"}},
		{PortATA, "ata3.02", nil},
		{PortNVMe, "nvme1", []string{"nvme1n1"}},
		{PortNVMe, "nvme11", nil},
	} {
		if got := kernels(m.Lookup(c.kind, c.name)); !slices.Equal(got, c.want) {
			t.Errorf("Lookup(%s, %s) = %v, want %v", c.kind, c.name, got, c.want)
		}
	}
}
