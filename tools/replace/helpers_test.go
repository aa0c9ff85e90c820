package replace

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// statusDir holds real `zpool status` outputs shared by the project.
const statusDir = "../../testdata/zpool-status"

// loadPools parses a status fixture with the project's parser: a path
// under ../testdata/zpool-status, else under testdata/.
func loadPools(t *testing.T, name string) []*zfs.Pool {
	t.Helper()
	path := filepath.Join(statusDir, name)
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join("testdata", name)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pools, err := zfs.ParseStatusText(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pools
}

func loadPool(t *testing.T, name string) *zfs.Pool {
	t.Helper()
	pools := loadPools(t, name)
	if len(pools) != 1 {
		t.Fatalf("%s: %d pools, want 1", name, len(pools))
	}
	return pools[0]
}

// leafByName finds a leaf by the name zpool prints.
func leafByName(t *testing.T, p *zfs.Pool, name string) *zfs.Vdev {
	t.Helper()
	for _, cv := range p.AllVdevs() {
		for _, l := range cv.Vdev.Leaves() {
			if l.Name == name {
				return l
			}
		}
	}
	t.Fatalf("pool %s has no leaf %s", p.Name, name)
	return nil
}

// golden compares got with testdata/<name>, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./replace -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from golden file; got:\n%s", name, got)
	}
}

// fakeProbe answers from a table keyed by kernel name; unknown disks are
// clean whole disks.
type fakeProbe map[string]probeAnswer

type probeAnswer struct {
	u   Usage
	err error
}

func (f fakeProbe) Usage(_ context.Context, d disk.Identity) (Usage, error) {
	if a, ok := f[d.Kernel]; ok {
		return a.u, a.err
	}
	return Usage{Type: "disk"}, nil
}

// Disks of the tresor1 machine: the surviving WD30EFRX mirror member, the
// Seagate the owner actually used as the replacement (it appears in the
// real resilvering output), and a small boot SSD.
var (
	tresorSurvivor = disk.Identity{Serial: "WD-WMC4N2558226", Model: "WDC WD30EFRX-68EUZN0",
		ByID:    "/dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N2558226",
		ByIDAll: []string{"/dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N2558226", "/dev/disk/by-id/wwn-0x50014ee2b5a1c3d4"},
		WWN:     "0x50014ee2b5a1c3d4", Kernel: "sda", SizeBytes: 3000592982016, LogicalSector: 512, PhysicalSector: 4096, Transport: disk.TransportSATA}
	tresorNew = disk.Identity{Serial: "ZR12E9YV", Model: "ST6000VX001-2BD186",
		ByID:    "/dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV",
		ByIDAll: []string{"/dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV", "/dev/disk/by-id/wwn-0x5000c500c1d2e3f4"},
		WWN:     "0x5000c500c1d2e3f4", Kernel: "sdb", SizeBytes: 6001175126016, LogicalSector: 512, PhysicalSector: 4096, Transport: disk.TransportSATA}
	tresorBoot = disk.Identity{Serial: "S3Z8NB0K123456A", Model: "Samsung SSD 860 EVO 250GB",
		ByID: "/dev/disk/by-id/ata-Samsung_SSD_860_EVO_250GB_S3Z8NB0K123456A", Kernel: "sdc",
		SizeBytes: 250059350016, LogicalSector: 512, PhysicalSector: 512, Transport: disk.TransportSATA}
	// tresorOld is the failing WD30EFRX while it is still attached.
	tresorOld = disk.Identity{Serial: "WD-WMC4N1768104", Model: "WDC WD30EFRX-68EUZN0",
		ByID: "/dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104", WWN: "0x50014ee25f6e7a8b",
		Kernel: "sdd", SizeBytes: 3000592982016, LogicalSector: 512, PhysicalSector: 4096, Transport: disk.TransportSATA}
)

// bootProbe marks the boot SSD as partitioned, formatted and mounted.
var bootProbe = fakeProbe{"sdc": {u: Usage{Type: "disk", Partitions: []string{"sdc1", "sdc2"},
	Signatures: []Signature{{Device: "sdc1", Type: "vfat"}, {Device: "sdc2", Type: "ext4"}},
	Mounts:     []string{"/boot/efi", "/"}}}}

func contains(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("output lacks %q:\n%s", sub, s)
		}
	}
}
