package collectors

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/kernlog"
)

// virtioDisk lays out /sys/block/<name> as virtio-blk does (the device
// path of the Firecracker capture, testdata/sysfs/firecracker-virtio-vda),
// with a constructed size and the given serial.
func virtioDisk(t *testing.T, root, name, serial string) {
	t.Helper()
	dev := filepath.Join(root, "sys/devices/pci0000:00/0000:00:02.0/virtio1/block", name)
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, body := range map[string]string{"size": "1048576\n", "serial": serial + "\n"} {
		if err := os.WriteFile(filepath.Join(dev, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "sys/block", name)
	_ = os.Remove(link)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../devices/pci0000:00/0000:00:02.0/virtio1/block/"+name, link); err != nil {
		t.Fatal(err)
	}
}

func serialsOf(ids []disk.Identity) []string {
	var out []string
	for _, id := range ids {
		out = append(out, id.Serial)
	}
	return out
}

// A kernel name passes to the next disk plugged in (the e2e readerr
// scenario: sdg of a removed disk went to the blkdebug disk, and its errors
// were counted under the removed disk's serial). Once the kernel announces
// the name anew, a record about it never takes the old disk's serial, and
// the map learns the new one in the background, even when the announcement
// comes right after a rebuild.
func TestPortCacheNameReusedAfterAnnouncement(t *testing.T) {
	root := t.TempDir()
	virtioDisk(t, root, "vdb", "OLDDISK")
	c := &portCache{root: root, log: discard(), gap: 200 * time.Millisecond}
	now := time.Now()
	c.rebuild(now)
	vdb := kernlog.Ref{Kind: disk.PortBlock, Name: "vdb"}
	if got := serialsOf(c.lookup(vdb, now)); len(got) != 1 || got[0] != "OLDDISK" {
		t.Fatalf("before: vdb = %v, want OLDDISK", got)
	}

	// Another disk now sits under vdb; nothing has read sysfs since.
	virtioDisk(t, root, "vdb", "NEWDISK")
	c.announced(announcedName("virtio_blk virtio5: [vdb] 1048576 512-byte logical blocks (537 MB/512 MiB)"), now)
	for _, id := range c.lookup(vdb, now) {
		if id.Serial == "OLDDISK" {
			t.Fatalf("right after the announcement vdb is still %+v", id)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := serialsOf(c.lookup(vdb, now))
		if len(got) == 1 && got[0] == "NEWDISK" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vdb = %v 5 s after the announcement, want NEWDISK", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A refresh asked for while one is due or running is put off, not
// dropped: the second of two disks plugged a moment apart is learnt.
func TestPortCacheRefreshNotDropped(t *testing.T) {
	root := t.TempDir()
	virtioDisk(t, root, "vdb", "FIRST")
	c := &portCache{root: root, log: discard(), gap: 100 * time.Millisecond}
	now := time.Now()
	c.rebuild(now)
	c.refresh(now) // due in 100 ms
	c.mu.Lock()
	waiting := c.waiting
	c.mu.Unlock()
	if !waiting {
		t.Fatal("a refresh within the gap was not scheduled")
	}
	c.refresh(now) // absorbed by the one due
	// The second disk appears after the first background rebuild.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		busy := c.waiting || c.running
		c.mu.Unlock()
		if !busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background rebuild never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
	virtioDisk(t, root, "vdc", "SECOND")
	c.announced("vdc", now) // within the gap of the last rebuild's clock
	for {
		if got := serialsOf(c.lookup(kernlog.Ref{Kind: disk.PortBlock, Name: "vdc"}, now)); len(got) == 1 && got[0] == "SECOND" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("vdc, announced right after a rebuild, was never learnt")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAnnouncedName(t *testing.T) {
	for msg, want := range map[string]string{
		"sd 0:0:7:0: [sdh] Attached SCSI disk":                                       "sdh",
		"virtio_blk virtio5: [vdc] 1048576 512-byte logical blocks (537 MB/512 MiB)": "vdc",
		"nvme nvme1: 2/0/0 default/read/poll queues":                                 "",
		"sd 0:0:7:0: [sdh Attached":                                                  "",
	} {
		if got := announcedName(msg); got != want {
			t.Errorf("announcedName(%q) = %q, want %q", msg, got, want)
		}
	}
}
