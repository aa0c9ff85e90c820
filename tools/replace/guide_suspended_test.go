package replace

import (
	"os"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// The pulled disk of the real suspended single-disk pool (OpenZFS 2.3.2,
// testdata/kstat): zpool status shows it ONLINE with write errors and the
// pool SUSPENDED. Its guide says to bring it back and zpool clear, never to
// keep it connected or to replace it.
func TestGuideForSuspendedPool(t *testing.T) {
	b, err := os.ReadFile("../../testdata/kstat/zfs-2.3.2/suspended.zpool-status-j.json")
	if err != nil {
		t.Fatal(err)
	}
	pools, err := zfs.ParseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	var hung *zfs.Pool
	for _, p := range pools {
		if p.Name == "hung" {
			hung = p
		}
	}
	if hung == nil || hung.State != zfs.StateSuspended {
		t.Fatalf("capture has no suspended pool hung: %+v", pools)
	}
	leaf := hung.Vdevs[0].Leaves()[0]
	r := ReplacementFor(hung, leaf, nil)
	r.PoolState = hung.State
	text := Guide(alert.Alert{Name: "VdevErrors", Summary: "disk in hung: 3 read, 12 write errors", Replacement: &r})
	contains(t, text, "Bringing pool hung back from SUSPENDED", "/dev/disk/by-id/scsi-35000c500a0000001-part1 went away",
		"zpool clear hung\n", "zpool status -v hung\n")
	for _, wrong := range []string{"Keep the old disk connected", "zpool replace", "hung//dev"} {
		if strings.Contains(text, wrong) {
			t.Errorf("guide for a suspended pool says %q:\n%s", wrong, text)
		}
	}
	// PoolSuspended itself carries the pool and devices in its evidence.
	a := alert.Alert{Name: "PoolSuspended", Labels: map[string]string{"pool": "hung"},
		Evidence: map[string]string{"pool_state": "SUSPENDED", "devices": "disk/by-id/scsi-35000c500a0000001-part1"}}
	contains(t, Guide(a), "because disk/by-id/scsi-35000c500a0000001-part1", "zpool clear hung\n")
	// PoolState's evidence lists each device with its state: the name alone is the device.
	a.Evidence["devices"] = "disk/by-id/scsi-35000c500a0000001-part1 UNAVAIL"
	if g := Guide(a); strings.Contains(g, "UNAVAIL went away") {
		t.Errorf("device named with its state: %s", g)
	}
}

// A single-disk top-level vdev is the disk: the heading names it once.
func TestGuideHeadingSingleDisk(t *testing.T) {
	r := alert.Replacement{Pool: "solo", TopVdev: "/dev/disk/by-id/ata-X_SER1", VdevPath: "/dev/disk/by-id/ata-X_SER1", VdevState: "FAULTED"}
	text := Guide(alert.Alert{Replacement: &r})
	if strings.Contains(text, "(/dev/disk/by-id/ata-X_SER1)") {
		t.Errorf("heading names the disk twice:\n%s", text)
	}
}
