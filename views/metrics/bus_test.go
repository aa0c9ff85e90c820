package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/rules/runner"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// openBus is a real embedded NATS/JetStream in a temp dir.
// TestScrapeOfRecordedFleet scrapes a fleet server's bus holding two hosts'
// real recorded outputs (nas1: vault DEGRADED with a disk OFFLINE; nas2:
// vault with a disk REMOVED), judged by the real rule engine, through the
// real status view reader.
func TestScrapeOfRecordedFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := viewtest.OpenBus(ctx, t)
	// Channels with secrets: none of them may reach /metrics.
	const token, password = "azGDORePK8gMaC0QOYAMyEEuzJnyUi", "smtp-Pa55-word"
	loaded, err := config.Parse(strings.NewReader(`host: nas1
state_dir: /tmp/zw
notify:
  console: true
  channels:
    - {name: phone, type: pushover, token: `+token+`, user: uQiRzpo4DXghDmr9QzzfQu27cmVRsG}
    - {name: mail, type: email, smtp: {host: smtp.example.net, port: 465, tls: implicit, username: nas1, password: `+password+`}, from: zwatch@example.net, to: [ops@example.net]}
`), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	cfg := loaded.Config
	rctx, stopRules := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- runner.RunWith(rctx, b, cfg.Rules, runner.Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	defer func() { stopRules(); <-done }()
	viewtest.Publish(ctx, t, b, "nas1", "b1-offline")
	viewtest.Publish(ctx, t, b, "nas2", "c1-removed")

	h := Handler(Options{View: statusview.New(b, &cfg), Version: "test"})
	var text string
	for {
		code, body := scrape(t, h, nil)
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
		f := families(t, body)
		if len(series(f, "zwatch_alerts", map[string]string{"host": "nas1"})) > 0 && len(series(f, "zwatch_alerts", map[string]string{"host": "nas2"})) > 0 {
			text = body
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no alerts for both hosts in the scrape:\n%s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	promtoolCheck(t, text)
	for _, secret := range []string{token, password, "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"} {
		if strings.Contains(text, secret) {
			t.Errorf("a channel secret is in /metrics")
		}
	}
	fams := families(t, text)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"zfs_pool_health", map[string]string{"host": "nas1", "pool": "vault"}, 1},
		{"zfs_pool_health", map[string]string{"host": "nas1", "pool": "fast"}, 0},
		{"zwatch_pool_state", map[string]string{"host": "nas1", "pool": "vault", "state": "degraded"}, 1},
		{"zfs_pool_size_bytes", map[string]string{"host": "nas1", "pool": "vault"}, 5905580032},
		{"zwatch_pool_redundancy_margin", map[string]string{"host": "nas1", "pool": "vault"}, 1},
		{"zwatch_vdev_health", map[string]string{"host": "nas1", "pool": "vault", "vdev": viewtest.OfflineDisk}, 3},
		{"zwatch_vdev_health", map[string]string{"host": "nas2", "pool": "vault", "vdev": "/dev/disk/by-id/scsi-35000c500a0000001-part1"}, 5},
		// Airflow_Temperature_Cel's raw value as the QEMU ATA disk gave it.
		{"smartctl_device_attribute", map[string]string{"host": "nas1", "device": "ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001", "attribute_id": "190", "attribute_value_type": "raw"}, 522125343},
		{"smartctl_device_smart_status", map[string]string{"host": "nas1", "device": "ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001"}, 1},
		{"smartctl_device_media_errors", map[string]string{"host": "nas1", "device": "nvme0"}, 0},
		{"smartctl_device_smartctl_exit_status", map[string]string{"host": "nas1", "device": "scsi-35000c500a0000001"}, 4},
		{"zwatch_host_silent", map[string]string{"host": "nas2"}, 0},
		{"zwatch_scrape_error", map[string]string{"part": "hosts"}, 0},
	} {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// nas2's last scan is the scrub that ended before the disk was removed.
	if at := value(t, fams, "zfs_pool_scrub_last_completed_timestamp_seconds", map[string]string{"host": "nas2", "pool": "vault"}); at < float64(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).Unix()) {
		t.Errorf("nas2 vault's scrub completed at %v, want Nov 30 2026", at)
	}
	// The outbox is the server's own: its host label is the local host.
	for _, ch := range []string{"console", "phone", "mail"} {
		if len(series(fams, "zwatch_outbox_backlog", map[string]string{"host": "nas1", "channel": ch})) != 1 {
			t.Errorf("no outbox backlog for channel %s", ch)
		}
	}
}
