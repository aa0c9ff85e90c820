package daemon

import (
	"os"
	"testing"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// A real degraded status (GUID-named missing disk with `was`) joined to
// disks known by serial: present and missing members both find their vdev.
func TestDiskMembershipRealStatus(t *testing.T) {
	f, err := os.Open(captured + "c4-missing.zpool-status-j.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pools, err := zfs.ParseStatusJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	ids := []disk.Identity{
		{Serial: "ZWV0001", ByID: "/dev/disk/by-id/virtio-ZWV0001", ByIDAll: []string{"/dev/disk/by-id/virtio-ZWV0001"}},
		{Serial: "ZWS0002", WWN: "0x5000c500a0000002", ByID: "/dev/disk/by-id/wwn-0x5000c500a0000002", ByIDAll: []string{"/dev/disk/by-id/wwn-0x5000c500a0000002"}},
	}
	m := DiskMembership(pools, disk.NewResolver(t.TempDir(), ids))
	for serial, want := range map[string]Member{"ZWV0001": {"vault", "raidz2-0"}, "ZWS0002": {"vault", "raidz2-0"}} {
		if m[serial] != want {
			t.Errorf("%s: %+v, want %+v (all: %+v)", serial, m[serial], want, m)
		}
	}
}
