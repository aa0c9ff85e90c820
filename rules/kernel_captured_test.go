package rules

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/kernlog"
)

// cap232l holds the QEMU captures of step l (testdata/captured/zfs-2.3.2/README.md).
const cap232l = "../testdata/captured/zfs-2.3.2/"

// The same moment of a real kernel (QEMU blkdebug returning EIO to reads of
// a pool disk) saved five ways gives the same alert.
func TestEvalKernelCapturedFormats(t *testing.T) {
	for _, f := range []string{"dmesg.txt", "dmesg-T.txt", "journalctl-k.txt", "journalctl-k-o-json.json", "kmsg.txt"} {
		as, err := evalAt([]string{cap232l + "l4-read-errors." + f}, config.DefaultRules(), t0)
		if err != nil || len(as) != 1 {
			t.Fatalf("%s: %v %v", f, as, err)
		}
		a := as[0]
		if a.Name != nameKernelDiskErrors || a.Labels["disk"] != "sda" || !strings.HasPrefix(a.Summary, "sda: 3 I/O errors and 3 failed commands") {
			t.Errorf("%s: %s %v %q", f, a.Name, a.Labels, a.Summary)
		}
	}
	// Hot-unplugged virtio and NVMe disks: the kernel says nothing about them
	// (ZFS's zio lines are no disk message), so nothing fires. Nor does a
	// deadman run's log (a kernel BUG in a ZFS thread: IOHung's, not a disk's).
	for _, f := range []string{"l2-virtio-unplug.kmsg.txt", "l3-nvme-unplug.kmsg.txt", "l6-deadman-continue.kmsg.txt"} {
		if as, err := evalAt([]string{cap232l + f}, config.DefaultRules(), t0); err != nil || len(as) != 0 {
			t.Errorf("%s: %v %v", f, as, err)
		}
	}
}

// A saved log with its pool's status: ZFS and the kernel both report, but
// the saved log names no serial, so they stay two alerts, not a guess.
func TestEvalKernelCapturedWithStatus(t *testing.T) {
	as, err := evalAt([]string{cap232l + "l4-read-errors.zpool-status.txt", cap232l + "l4-read-errors.dmesg.txt"}, config.DefaultRules(), t0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, nameKernelDiskErrors) || strings.Contains(got, nameDiskIncident) {
		t.Errorf("alerts %s", got)
	}
}

// Live, the follower names the disk behind sda; its kernel alert and the
// ZFS alerts of its vdev become one incident, in one page with the pool's. The records are the real
// /dev/kmsg capture, classified and folded here as the follower does; the
// identity is the one the capture gave the disk: the vdev's WWN, and the
// serial e2e/capture_kernel.sh plugs it with (l_plug bd1 … ZWBD0001).
func TestKernelIncidentCaptured(t *testing.T) {
	f, err := os.Open(cap232l + "l4-read-errors.kmsg.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entry := facts.KernelDiskLog{Ref: "sda", Counts: map[string]int{},
		Disk: &disk.Identity{Serial: "ZWBD0001", WWN: "0x5000c500a0000105", Kernel: "sda", Transport: disk.TransportSCSI}}
	if _, err := kernlog.ReadSaved(f, func(r kernlog.Record) error {
		if fd, ok := kernlog.Classify(r.Message); ok && fd.Ref.Name == "sda" {
			entry.Counts[string(fd.Kind)]++
			if len(entry.Examples) < 3 {
				entry.Examples = append(entry.Examples, r.Message)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	entry.First, entry.Last = t0, t0
	e := newTestEngine()
	observe(t, e, kernelEnv(t, t0, entry), t0)
	at := t0.Add(2 * time.Second)
	observe(t, e, statusEnv(t, "captured/zfs-2.3.2/l4-read-errors.zpool-status.txt", at), at)
	ns := e.Tick(at.Add(20 * time.Second))
	sameList(t, noteLines(ns), []string{
		"firing critical DiskIncident: sda (ZWBD0001) in kio/mirror-0: 3 I/O errors and 3 failed commands, FAULTED and 3 read errors",
		"firing critical RedundancyMargin: kio/mirror-0 has no redundancy left",
		"firing warning PoolState: pool kio is DEGRADED: wwn-0x5000c500a0000105 FAULTED",
		"--",
	})
}

// SlowIO joins the incident too: the throttled disk of captures l5/l6
// (virtio-ZWV0003 of kslow) with a kernel alert about it. The kernel.log
// payload is built by hand (the throttled disk logged nothing); its
// identity is the capture's (serial ZWV0003, by-id virtio-ZWV0003).
func TestDiskIncidentWithSlowIO(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameSlowIO) })
	id := &disk.Identity{Serial: "ZWV0003", Kernel: "vdc", ByID: "/dev/disk/by-id/virtio-ZWV0003", Transport: disk.TransportVirt}
	observe(t, e, kernelEnv(t, t0, kernelEntry(id, "vdc", t0, t0, map[string]int{"timeout": 2})), t0)
	at := t0
	for _, f := range []string{"l5-before.zpool-status-j.json", "l5-slow.zpool-status-j.json", "l6-deadman-continue.zpool-status-s-j.json"} {
		observe(t, e, poolsEnv(t, statusPools(t, captured+f), at), at)
		at = at.Add(time.Minute)
	}
	a := find(e, nameDiskIncident)
	if want := "vdc (ZWV0003) in kslow/mirror-0: 2 command timeouts and 24 new slow I/Os, likely the next disk to fail"; a == nil || a.Summary != want {
		t.Fatalf("%+v\nwant %q", a, want)
	}
}
