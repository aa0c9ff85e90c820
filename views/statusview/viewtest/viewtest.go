// Package viewtest publishes the real outputs OpenZFS 2.3.2 and smartctl gave
// in the QEMU harness (testdata/captured/zfs-2.3.2) onto a bus, the way the
// collectors publish them, for tests of what reads the bus: the status page,
// its API and /metrics.
package viewtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// Captured is the directory of the recorded outputs.
func Captured() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "captured", "zfs-2.3.2")
}

// SmartFiles are the recorded smartctl -a --json outputs of disks in the
// pools of the b1 capture: ATA (a pool member), SATA SSD, NVMe (a member
// of pool fast) and SAS (a member of pool vault).
var SmartFiles = []string{"a.smartctl-a-json-ata.json", "a.smartctl-a-json-ata-ssd.json", "a.smartctl-a-json-nvme.json", "a.smartctl-a-json-scsi.json"}

// OfflineDisk is the vdev the b1 capture took offline in pool vault.
const OfflineDisk = "/dev/disk/by-id/virtio-ZWV0001-part1"

// Publish puts host's facts on b: zpool status and zpool list of capture
// prefix (e.g. "b1-offline": pool vault DEGRADED with one disk OFFLINE,
// pool fast ONLINE), the SMART reports of SmartFiles and a heartbeat.
func Publish(ctx context.Context, t testing.TB, b *bus.Bus, host, prefix string) {
	t.Helper()
	pub := &collectors.BusPublisher{Bus: b, Host: host}
	dir := Captured()
	pools, err := zfs.ParseStatusText(bytes.NewReader(read(t, filepath.Join(dir, prefix+".zpool-status-p-P.txt"))))
	if err != nil {
		t.Fatalf("parse %s status: %v", prefix, err)
	}
	list, err := zfs.ParseList(bytes.NewReader(read(t, filepath.Join(dir, prefix+".zpool-list-Hp.txt"))))
	if err != nil {
		t.Fatalf("parse %s list: %v", prefix, err)
	}
	must(t, collectors.Publish(ctx, pub, facts.ZpoolStatus, "zpool_status", facts.StatusData{Source: "text", Pools: pools}))
	must(t, collectors.Publish(ctx, pub, facts.ZpoolCapacity, "zpool_list", facts.CapacityData{Pools: list}))
	for _, f := range SmartFiles {
		rep, err := smart.Parse(bytes.NewReader(read(t, filepath.Join(dir, f))))
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		must(t, collectors.Publish(ctx, pub, facts.Smart, "smart", *rep, rep.Serial))
	}
	now := time.Now().UTC()
	must(t, collectors.Publish(ctx, pub, facts.Heartbeat, "heartbeat", facts.HeartbeatData{Version: "test", Started: now,
		Collectors: map[string]facts.CollectorHealth{"zpool_status": {Interval: time.Minute, LastOK: &now}}}))
}

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// OpenBus opens an embedded bus with the facts stream on a fresh state
// directory, closed when the test ends.
func OpenBus(ctx context.Context, t testing.TB) *bus.Bus {
	t.Helper()
	b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}
