package statusview_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/rules/runner"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// TestHostViewOfRecordedDegradedPool reads the view of a host whose facts are
// the real outputs of a pool with one disk taken offline, with the real rule
// engine judging them.
func TestHostViewOfRecordedDegradedPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := viewtest.OpenBus(ctx, t)
	cfg := config.Default()
	cfg.Host = "nas1"
	cfg.Notify.Console = true
	rctx, stopRules := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- runner.RunWith(rctx, b, cfg.Rules, runner.Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	defer func() { stopRules(); <-done }()

	viewtest.Publish(ctx, t, b, "nas1", "b1-offline")
	r := statusview.New(b, &cfg)
	var h statusview.Host
	var err error
	for {
		h, err = r.Host(ctx, "nas1")
		if err == nil && len(h.Alerts) > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no alert in the view: %v %+v", err, h)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(h.Pools) != 2 || h.Pools[1].Name != "vault" || h.Pools[1].State != "DEGRADED" {
		t.Fatalf("pools: %+v", h.Pools)
	}
	vault := h.Pools[1]
	if vault.Margin == nil || *vault.Margin != 1 || vault.MarginText != "can lose 1 more disk" {
		t.Errorf("vault margin %v %q, want 1 (raidz2 with one disk offline)", vault.Margin, vault.MarginText)
	}
	if vault.SizeBytes != 5905580032 || vault.CapacityAt == nil {
		t.Errorf("vault capacity not joined: %+v", vault)
	}
	var offline, wd, sas *statusview.Vdev
	for i, v := range vault.Vdevs {
		switch v.Path {
		case "/dev/disk/by-id/scsi-35000c500a0000001-part1":
			sas = &vault.Vdevs[i]
		case viewtest.OfflineDisk:
			offline = &vault.Vdevs[i]
		case "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001-part1":
			wd = &vault.Vdevs[i]
		}
	}
	if offline == nil || !offline.Problem || offline.State != "OFFLINE" || offline.Depth != 1 {
		t.Errorf("offline vdev not highlighted: %+v", offline)
	}
	if wd == nil || wd.Problem || wd.Serial != "WD-WCC7K0000001" || wd.ByID != "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001" {
		t.Errorf("WD member not joined to its SMART report: %+v", wd)
	}
	// smartctl read the SAS disk by its scsi-3<naa> name, which has no serial.
	if sas == nil || sas.Serial != "ZWS0001" {
		t.Errorf("SAS member not joined to its SMART report: %+v", sas)
	}
	var disk *statusview.Disk
	for i := range h.Disks {
		if h.Disks[i].Serial == "WD-WCC7K0000001" {
			disk = &h.Disks[i]
		}
	}
	if disk == nil || disk.Pool != "vault" || disk.Health != "passed" || disk.TemperatureC == nil {
		t.Fatalf("disk view: %+v", disk)
	}
	if _, ok := disk.Attributes[history.SeriesReallocated]; !ok { // the QEMU disk reports 5 among the watched ones
		t.Errorf("reallocated sectors missing from %v", disk.Attributes)
	}
	if h.LastHeartbeat == nil || h.Version != "test" || h.Silent {
		t.Errorf("heartbeat: %v %q silent=%v", h.LastHeartbeat, h.Version, h.Silent)
	}

	hosts, err := r.Hosts(ctx)
	if err != nil || len(hosts) != 1 || hosts[0].Host != "nas1" || hosts[0].PoolsNotOnline != 1 || hosts[0].Firing == 0 {
		t.Errorf("hosts: %+v %v", hosts, err)
	}
	all, err := r.All(ctx)
	if err != nil || len(all) != 1 {
		t.Errorf("all: %d %v", len(all), err)
	}
	// The inventory is the same pools, disks and alerts, without the outbox.
	inv, err := r.Inventory(ctx)
	if err != nil || len(inv) != 1 || len(inv[0].Pools) != 2 || len(inv[0].Disks) != len(h.Disks) ||
		len(inv[0].Alerts) == 0 || len(inv[0].Recent) != 0 || inv[0].Version != "test" {
		t.Errorf("inventory: %+v %v", inv, err)
	}
	if _, err := r.Host(ctx, "nas9"); !errors.Is(err, statusview.ErrNoSuchHost) {
		t.Errorf("unknown host: %v", err)
	}
	progress, err := r.Outbox(ctx)
	if err != nil || len(progress) != 1 || progress[0].Channel != "console" {
		t.Errorf("outbox: %+v %v", progress, err)
	}
}
