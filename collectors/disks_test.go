package collectors

import (
	"context"
	"errors"
	"testing"

	"github.com/zwatch/zwatch/facts"
)

func TestDisksListsTheRealSysfsCapture(t *testing.T) {
	pub := &memPublisher{}
	c := &Disks{Root: "../testdata/sysfs/firecracker-virtio-vda"}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	if len(pub.msgs) != 1 || pub.msgs[0].kind != facts.Disks.Name() {
		t.Fatalf("published %+v", pub.msgs)
	}
	d := pub.msgs[0].data.(facts.DisksData)
	// loop0 and zram0 are virtual; vda is the one disk.
	if len(d.Disks) != 1 || d.Disks[0].Kernel != "vda" || d.Disks[0].Serial != "overlayblk" {
		t.Errorf("disks = %+v", d.Disks)
	}
	if _, err := (&Disks{Root: t.TempDir()}).Read(context.Background()); !errors.Is(err, ErrNotAvailable) {
		t.Errorf("no sysfs: err = %v, want ErrNotAvailable", err)
	}
}
