package collectors

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/execx"
)

func TestSmartCollectTargetReadsOneDiskAwakeAndBounded(t *testing.T) {
	s := newStandIn(t)
	s.replayFixture("/dev/vda", "sata-ssd-wd-red-sa500-4tb-no-thresh.json", 0)
	now := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	c := NewSmartCollector(SmartConfig{Timeout: time.Second, UrgentMinInterval: 5 * time.Minute}, execx.New(time.Second))
	c.Root = "../testdata/sysfs/firecracker-virtio-vda" // real sysfs capture: vda
	c.Now = func() time.Time { return now }
	pub := &memPublisher{}
	ctx := context.Background()

	// A partition, as a kernel line or a vdev path names it, is its disk.
	if err := c.CollectTarget(ctx, pub, "vda1"); err != nil {
		t.Fatalf("CollectTarget(vda1): %v", err)
	}
	if r := pub.reports()["REDACTED"]; r == nil || r.Kernel != "vda" {
		t.Fatalf("reports = %v", keys(pub.reports()))
	}
	argv := s.argv()
	if !strings.Contains(argv, "--json=c -a /dev/vda") || strings.Contains(argv, "standby") || strings.Contains(argv, "--scan-open") {
		t.Errorf("argv log (want one awake read, no scan):\n%s", argv)
	}

	// A second request within the interval reads nothing.
	var skip *UrgentSkip
	if err := c.CollectTarget(ctx, pub, "/dev/vda"); !errors.As(err, &skip) {
		t.Errorf("second CollectTarget = %v, want a skip", err)
	}
	if n := strings.Count(s.argv(), "\n"); n != 1 {
		t.Errorf("smartctl ran %d times, want 1", n)
	}
	now = now.Add(5 * time.Minute)
	if err := c.CollectTarget(ctx, pub, "/dev/vda"); err != nil {
		t.Errorf("CollectTarget after the interval: %v", err)
	}
	if n := strings.Count(s.argv(), "\n"); n != 2 {
		t.Errorf("smartctl ran %d times, want 2", n)
	}

	// A name that maps to no disk present is skipped, not read.
	if err := c.CollectTarget(ctx, pub, "sdz"); !errors.As(err, &skip) || !strings.Contains(err.Error(), "no disk") {
		t.Errorf("CollectTarget(sdz) = %v", err)
	}
}

func TestSmartCollectTargetKeepsToConfiguredDevices(t *testing.T) {
	s := newStandIn(t)
	s.replayFixture("/dev/vda", "sata-ssd-wd-red-sa500-4tb-no-thresh.json", 0)
	c := NewSmartCollector(SmartConfig{Timeout: time.Second, Devices: []SmartDevice{{Device: "/dev/sda"}}}, execx.New(time.Second))
	c.Root = "../testdata/sysfs/firecracker-virtio-vda"
	var skip *UrgentSkip
	if err := c.CollectTarget(context.Background(), &memPublisher{}, "vda"); !errors.As(err, &skip) || !strings.Contains(err.Error(), "smart.devices") {
		t.Errorf("CollectTarget(vda) = %v, want a skip naming smart.devices", err)
	}
	if s.argv() != "" {
		t.Errorf("smartctl ran: %s", s.argv())
	}

	// A listed disk is read with its configured type.
	c.Config.Devices = []SmartDevice{{Device: "/dev/vda", Type: "sat"}}
	if err := c.CollectTarget(context.Background(), &memPublisher{}, "/dev/vda"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.argv(), "--json=c -a -d sat /dev/vda") {
		t.Errorf("argv log:\n%s", s.argv())
	}
}
