package disk

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeDisk is the constructed sysfs of one disk: values typical of the real
// device named in the by-id listing, not captured from it.
type fakeDisk struct {
	kernel  string
	sysPath string            // /sys/block/<kernel> link target, relative to sys/block
	attrs   map[string]string // files under the block device dir
	devLink string            // "device" link target, relative to the block dir
	devAttr map[string]string // files under the device dir
	parts   []string          // partition kernel names
}

// buildTree makes root/sys and root/dev from a real by-id listing and the
// constructed disks.
func buildTree(t *testing.T, listing string, disks []fakeDisk) string {
	t.Helper()
	root := t.TempDir()
	mk := func(p, content string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range disks {
		link(d.sysPath, "sys/block/"+d.kernel)
		blk := filepath.Join("sys/block", d.sysPath)
		for f, v := range d.attrs {
			mk(filepath.Join(blk, f), v)
		}
		if d.devLink != "" {
			link(d.devLink, filepath.Join(blk, "device"))
			for f, v := range d.devAttr {
				mk(filepath.Join(blk, d.devLink, f), v)
			}
		}
		mk("dev/"+d.kernel, "")
		for _, p := range d.parts {
			mk("dev/"+p, "")
			mk(filepath.Join(blk, p, "partition"), "1\n")
		}
	}
	for name, target := range readListing(t, listing) {
		link(target, filepath.Join("dev/disk/by-id", name))
	}
	return root
}

// readListing parses `ls -l` lines "... name -> target".
func readListing(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("../../testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if n := len(fields); n >= 3 && fields[n-2] == "->" {
			out[fields[n-3]] = fields[n-1]
		}
	}
	if len(out) == 0 {
		t.Fatalf("no links in %s", file)
	}
	return out
}

// vpd80 is a Unit Serial Number VPD page as libata builds it: header, then
// the 20-byte ATA serial, right-aligned.
func vpd80(serial string) string {
	s := strings.Repeat(" ", 20-len(serial)) + serial
	return string([]byte{0, 0x80, 0, byte(len(s))}) + s
}

// wd20ezrx constructs an ATA disk on an AHCI port: libata shows the first
// 16 characters of the model and the last 4 of the firmware in sysfs.
func wd20ezrx(kernel string, port int, serial, wwn string) fakeDisk {
	host := string(rune('0' + port))
	return fakeDisk{
		kernel:  kernel,
		sysPath: "../devices/pci0000:00/0000:00:1f.2/ata" + string(rune('1'+port)) + "/host" + host + "/target" + host + ":0:0/" + host + ":0:0:0/block/" + kernel,
		attrs: map[string]string{
			"size": "3907029168\n", "removable": "0\n", "queue/rotational": "1\n",
			"queue/logical_block_size": "512\n", "queue/physical_block_size": "4096\n",
		},
		devLink: "../../../" + host + ":0:0:0",
		devAttr: map[string]string{
			"model": "WDC WD20EZRX-00D\n", "vendor": "ATA     \n", "rev": "0A80\n",
			"wwid": "naa." + wwn + "\n", "vpd_pg80": vpd80(serial),
		},
		parts: []string{kernel + "1", kernel + "2"},
	}
}

func ubuntuRaidz(t *testing.T) string {
	sr0 := fakeDisk{kernel: "sr0", sysPath: "../devices/pci0000:00/0000:00:1f.2/ata5/host4/target4:0:0/4:0:0:0/block/sr0",
		attrs: map[string]string{"size": "2097151\n", "removable": "1\n"}}
	return buildTree(t, "by-id/ubuntu-forums-3x-wd20ezrx-raidz.txt", []fakeDisk{
		wd20ezrx("sda", 0, "WD-WMC4M2152254", "50014ee659938cc2"),
		wd20ezrx("sdb", 1, "WD-WCC300448071", "50014ee2b34130ff"),
		wd20ezrx("sdc", 2, "WD-WMC4M2612840", "50014ee6aee8a1e4"),
		sr0,
	})
}

func nixosNVMe(t *testing.T) string {
	return buildTree(t, "by-id/nixos-arm-nvme-970evoplus-mmc.txt", []fakeDisk{
		{
			kernel:  "nvme0n1",
			sysPath: "../devices/platform/f8000000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/nvme/nvme0/nvme0n1",
			attrs: map[string]string{
				"size": "488397168\n", "removable": "0\n", "queue/rotational": "0\n",
				"queue/logical_block_size": "512\n", "queue/physical_block_size": "512\n", "wwid": "eui.0025385691b60a37\n",
			},
			devLink: "../../nvme0",
			devAttr: map[string]string{"model": "Samsung SSD 970 EVO Plus 250GB          \n", "serial": "S4EUNF0M663546L     \n"},
			parts:   []string{"nvme0n1p1", "nvme0n1p9"},
		},
		{
			kernel:  "mmcblk2",
			sysPath: "../devices/platform/fe330000.mmc/mmc_host/mmc1/mmc1:0001/block/mmcblk2",
			attrs:   map[string]string{"size": "30535680\n", "removable": "0\n", "queue/rotational": "0\n", "queue/logical_block_size": "512\n"},
			parts:   []string{"mmcblk2p1"},
		},
		{
			kernel:  "mmcblk2boot0",
			sysPath: "../devices/platform/fe330000.mmc/mmc_host/mmc1/mmc1:0001/block/mmcblk2/mmcblk2boot0",
			attrs:   map[string]string{"size": "8192\n"},
		},
		{kernel: "zd0", sysPath: "../devices/virtual/block/zd0", attrs: map[string]string{"size": "8388608\n"}},
	})
}

func TestDiscoverSATA(t *testing.T) {
	ids, err := Discover(ubuntuRaidz(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 {
		t.Fatalf("got %d disks, want 3 (sr0 skipped): %+v", len(ids), ids)
	}
	want := Identity{
		Serial: "WD-WMC4M2152254", WWN: "0x50014ee659938cc2", Model: "WDC WD20EZRX-00D8PB0", Firmware: "0A80",
		ByID: "/dev/disk/by-id/ata-WDC_WD20EZRX-00D8PB0_WD-WMC4M2152254",
		ByIDAll: []string{
			"/dev/disk/by-id/ata-WDC_WD20EZRX-00D8PB0_WD-WMC4M2152254",
			"/dev/disk/by-id/wwn-0x50014ee659938cc2",
		},
		Kernel: "sda", SizeBytes: 2000398934016, RotationRPM: -1, LogicalSector: 512, PhysicalSector: 4096, Transport: TransportSATA, Port: "ata1",
	}
	if !reflect.DeepEqual(ids[0], want) {
		t.Errorf("sda:\n got %+v\nwant %+v", ids[0], want)
	}
	if ids[1].Kernel != "sdb" || ids[1].Serial != "WD-WCC300448071" || ids[1].Model != "WDC WD20EZRX-00DC0B0" {
		t.Errorf("sdb = %+v", ids[1])
	}
}

func TestDiscoverNVMeAndMMC(t *testing.T) {
	ids, err := Discover(nixosNVMe(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 {
		t.Fatalf("got %d disks, want mmcblk2 and nvme0n1: %+v", len(ids), ids)
	}
	mmc, nv := ids[0], ids[1]
	want := Identity{
		Serial: "S4EUNF0M663546L", WWN: "eui.0025385691b60a37", Model: "Samsung SSD 970 EVO Plus 250GB",
		// the serial-bearing name wins over nvme-eui.
		ByID: "/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_Plus_250GB_S4EUNF0M663546L",
		ByIDAll: []string{
			"/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_Plus_250GB_S4EUNF0M663546L",
			"/dev/disk/by-id/nvme-eui.0025385691b60a37",
		},
		Kernel: "nvme0n1", SizeBytes: 250059350016, RotationRPM: 0, LogicalSector: 512, PhysicalSector: 512, Transport: TransportNVMe, Port: "nvme0 pci 0000:01:00.0",
	}
	if !reflect.DeepEqual(nv, want) {
		t.Errorf("nvme0n1:\n got %+v\nwant %+v", nv, want)
	}
	if mmc.Kernel != "mmcblk2" || mmc.ByID != "/dev/disk/by-id/mmc-AJTD4R_0x2a92dcf1" || mmc.SizeBytes != 15634268160 {
		t.Errorf("mmcblk2 = %+v", mmc)
	}
}

// TestDiscoverCapturedVirtio reads sysfs captured from the dev VM.
func TestDiscoverCapturedVirtio(t *testing.T) {
	ids, err := Discover("../../testdata/sysfs/firecracker-virtio-vda")
	if err != nil {
		t.Fatal(err)
	}
	want := []Identity{{
		Serial: "overlayblk", Kernel: "vda", SizeBytes: 536870912 * 512, RotationRPM: -1,
		LogicalSector: 512, PhysicalSector: 4096, Transport: TransportVirt, Port: "virtio pci 0000:00:02.0",
	}}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("got %+v\nwant %+v", ids, want)
	}
}

func TestDiscoverErrors(t *testing.T) {
	if _, err := Discover(t.TempDir()); err == nil {
		t.Error("no sys/block: want an error")
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/block"), 0o755); err != nil {
		t.Fatal(err)
	}
	ids, err := Discover(root)
	if err != nil || len(ids) != 0 {
		t.Errorf("empty machine: %v, %v", ids, err)
	}
}

func TestResolve(t *testing.T) {
	root := ubuntuRaidz(t)
	ids, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	// constructed by-path and by-partuuid links, as udev makes them
	for name, target := range map[string]string{
		"dev/disk/by-path/pci-0000:00:1f.2-ata-2":                   "../../sdb",
		"dev/disk/by-path/pci-0000:00:1f.2-ata-2-part1":             "../../sdb1",
		"dev/disk/by-partuuid/6c3a8e0d-0f5b-b64b-9f26-3f2b55b2f0a1": "../../sdc1",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	r := NewResolver(root, ids)
	cases := []struct{ vdev, was, kernel string }{
		{"/dev/disk/by-id/ata-WDC_WD20EZRX-00D8PB0_WD-WMC4M2152254", "", "sda"},
		{"/dev/disk/by-id/ata-WDC_WD20EZRX-00D8PB0_WD-WMC4M2152254-part1", "", "sda"},
		{"ata-WDC_WD20EZRX-00DC0B0_WD-WCC300448071-part1", "", "sdb"}, // zpool status prints it bare
		{"wwn-0x50014ee6aee8a1e4", "", "sdc"},
		{"/dev/disk/by-id/wwn-0x50014ee6aee8a1e4-part2", "", "sdc"},
		{"/dev/disk/by-path/pci-0000:00:1f.2-ata-2-part1", "", "sdb"},
		{"pci-0000:00:1f.2-ata-2", "", "sdb"},
		{"/dev/disk/by-partuuid/6c3a8e0d-0f5b-b64b-9f26-3f2b55b2f0a1", "", "sdc"},
		{"/dev/sda", "", "sda"},
		{"/dev/sdb2", "", "sdb"},
		{"sdc1", "", "sdc"},
		{"sdc", "", "sdc"},
		{"WD-WCC300448071", "", "sdb"},    // a serial number
		{"0x50014ee659938cc2", "", "sda"}, // a WWN
		{"9876543210987654321", "/dev/disk/by-id/ata-WDC_WD20EZRX-00D8PB0_WD-WMC4M2612840-part1", "sdc"},
	}
	for _, c := range cases {
		id, err := r.Resolve(c.vdev, c.was)
		if err != nil || id.Kernel != c.kernel || id.Absent {
			t.Errorf("Resolve(%q, %q) = %s absent=%v, %v; want %s", c.vdev, c.was, id.Kernel, id.Absent, err, c.kernel)
		}
	}
}

func TestResolveGone(t *testing.T) {
	root := ubuntuRaidz(t)
	ids, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	r := NewResolver(root, ids)
	for _, vdev := range []string{"1234567890123456789", "/dev/sdz", "nosuchthing", "/etc/passwd"} {
		if _, err := r.Resolve(vdev, ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q) error = %v, want ErrNotFound", vdev, err)
		}
	}
	// GUID-only vdev whose was-path disk has been pulled: described from
	// the name, marked absent.
	id, err := r.Resolve("1234567890123456789", "/dev/disk/by-id/ata-ST4000VN008-2DR166_ZGY5C1XL-part1")
	if err != nil {
		t.Fatal(err)
	}
	byID := "/dev/disk/by-id/ata-ST4000VN008-2DR166_ZGY5C1XL"
	want := Identity{Serial: "ZGY5C1XL", Model: "ST4000VN008-2DR166", Transport: TransportSATA, Absent: true,
		ByID: byID, ByIDAll: []string{byID}}
	if !reflect.DeepEqual(id, want) {
		t.Errorf("gone disk:\n got %+v\nwant %+v", id, want)
	}
}

func TestByIDHelpers(t *testing.T) {
	for name, serial := range map[string]string{
		"ata-WDC_WD20EZRX-00D8PB0_WD-WMC4M2152254":          "WD-WMC4M2152254",
		"nvme-PC711_NVMe_SK_hynix_512GB__CD0BN57381090BC4A": "CD0BN57381090BC4A",
		"usb-Generic-_Multi-Card_20120926571200000-0:0":     "20120926571200000",
		"scsi-SATA_WDC_WD20EZRX-00D_WD-WMC4M2152254":        "WD-WMC4M2152254",
		"virtio-overlayblk":                                 "overlayblk",
		"nvme-eui.0025385691b60a37":                         "",
		"wwn-0x50014ee659938cc2":                            "",
	} {
		if got := serialFromByID(name); got != serial {
			t.Errorf("serialFromByID(%s) = %q, want %q", name, got, serial)
		}
	}
	got := preferredByID([]string{"nvme-eui.0025385691b60a37", "nvme-X_S1_1", "nvme-X_S1", "wwn-0x1"})
	if got != "nvme-X_S1" {
		t.Errorf("preferredByID = %s", got)
	}
	if got := preferredByID([]string{"scsi-0QEMU_QEMU_HARDDISK_drive0", "wwn-0x5000"}); got != "wwn-0x5000" {
		t.Errorf("preferredByID = %s", got)
	}
}

// TestDiscoverQEMUListing uses the by-id listing captured in the QEMU VM
// (testdata/captured/zfs-2.3.2/a.ls-l-dev-disk-by-id.txt) with constructed
// sysfs for four of its disks (sizes: the README's 1G).
func TestDiscoverQEMUListing(t *testing.T) {
	const listing = "captured/zfs-2.3.2/a.ls-l-dev-disk-by-id.txt"
	if _, err := os.Stat(filepath.Join("../../testdata", listing)); err != nil {
		t.Skipf("capture not present: %v", err)
	}
	gib := map[string]string{"size": "2097152\n", "removable": "0\n", "queue/logical_block_size": "512\n", "queue/physical_block_size": "512\n"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}
	root := buildTree(t, listing, []fakeDisk{
		{kernel: "sda", sysPath: "../devices/pci0000:00/0000:00:03.0/virtio0/host0/target0:0:0/0:0:0:0/block/sda",
			attrs: with(gib, "queue/rotational", "1\n"), devLink: "../../../0:0:0:0",
			devAttr: map[string]string{"model": "ST4000NM0035    \n", "vendor": "SEAGATE \n", "rev": "2.5+\n", "wwid": "naa.5000c500a0000001\n", "vpd_pg80": string([]byte{0, 0x80, 0, 7}) + "ZWS0001"},
			parts:   []string{"sda1", "sda9"}},
		{kernel: "sdd", sysPath: "../devices/pci0000:00/0000:00:1f.2/ata1/host2/target2:0:0/2:0:0:0/block/sdd",
			attrs: with(gib, "queue/rotational", "1\n"), devLink: "../../../2:0:0:0",
			devAttr: map[string]string{"model": "WDC WD40EFRX-68N\n", "vendor": "ATA     \n", "rev": "2.5+\n"},
			parts:   []string{"sdd1", "sdd9"}},
		{kernel: "nvme0n1", sysPath: "../devices/pci0000:00/0000:00:05.0/nvme/nvme0/nvme0n1",
			attrs: with(gib, "queue/rotational", "0\n"), devLink: "../../nvme0",
			devAttr: map[string]string{"model": "QEMU NVMe Ctrl                          \n", "serial": "ZWNVME0001          \n", "firmware_rev": "7.2.22  \n"},
			parts:   []string{"nvme0n1p1", "nvme0n1p9"}},
		{kernel: "vdb", sysPath: "../devices/pci0000:00/0000:00:06.0/virtio3/block/vdb",
			attrs: with(with(gib, "queue/rotational", "1\n"), "serial", "ZWV0001"), parts: []string{"vdb1", "vdb9"}},
	})
	ids, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Identity{}
	for _, id := range ids {
		got[id.Kernel] = id
	}
	want := map[string]struct{ serial, wwn, model, byID, transport string }{
		"sda":     {"ZWS0001", "0x5000c500a0000001", "ST4000NM0035", "wwn-0x5000c500a0000001", TransportSCSI},
		"sdd":     {"WD-WCC7K0000001", "", "WDC WD40EFRX-68N32N0", "ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001", TransportSATA},
		"nvme0n1": {"ZWNVME0001", "", "QEMU NVMe Ctrl", "nvme-QEMU_NVMe_Ctrl_ZWNVME0001", TransportNVMe},
		"vdb":     {"ZWV0001", "", "", "virtio-ZWV0001", TransportVirt},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d disks: %+v", len(got), ids)
	}
	for k, w := range want {
		id := got[k]
		if id.Serial != w.serial || id.WWN != w.wwn || id.Model != w.model || id.ByID != ByIDDir+"/"+w.byID || id.Transport != w.transport {
			t.Errorf("%s = %+v, want %+v", k, id, w)
		}
	}
	if n := len(got["nvme0n1"].ByIDAll); n != 3 {
		t.Errorf("nvme0n1 ByIDAll = %q, want 3 names", got["nvme0n1"].ByIDAll)
	}
	r := NewResolver(root, ids)
	for vdev, kernel := range map[string]string{
		"nvme-QEMU_NVMe_Ctrl_ZWNVME0001_1-part1":                                          "nvme0n1",
		"nvme-nvme.1b36-5a574e564d4530303031-51454d55204e564d65204374726c-00000001-part9": "nvme0n1",
		"scsi-35000c500a0000001-part1":                                                    "sda",
		"virtio-ZWV0001-part1":                                                            "vdb",
		"/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001-part1":                  "sdd",
	} {
		if id, err := r.Resolve(vdev, ""); err != nil || id.Kernel != kernel {
			t.Errorf("Resolve(%s) = %s, %v; want %s", vdev, id.Kernel, err, kernel)
		}
	}
}

// The disk inventory's cost per run (the disks collector, every
// disks.interval) on the machine the benchmark runs on: its real /sys/block
// and /dev/disk/by-id.
func BenchmarkDiscoverLive(b *testing.B) {
	if _, err := Discover("/"); err != nil {
		b.Skip("no sysfs here:", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Discover("/"); err != nil {
			b.Fatal(err)
		}
	}
}
