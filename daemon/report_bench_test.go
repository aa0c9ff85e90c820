package daemon

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// BenchmarkAlertsSnapshot is one rebuild of the alerts snapshot, what the
// snapshotter does every 5 s on every box: the active alerts and silences
// from the state bucket, the dead letters and the last 50 notifications from
// the outbox of the real embedded bus, and the hash that decides whether the
// file is rewritten. The outbox holds 50 notifications of about 2 KB each,
// the 98 KB snapshot issue 19 measured (derived input, not a capture).
func BenchmarkAlertsSnapshot(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bs := viewtest.OpenBus(ctx, b)
	start := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	for i := range 50 {
		at := start.Add(time.Duration(i) * time.Minute)
		n := alert.Notification{ID: fmt.Sprintf("bench%02d", i), GroupKey: "nas1", Host: "nas1", Status: alert.Firing, Created: at,
			Alerts: []alert.Alert{{
				Name: "VdevState", Severity: alert.Critical, State: alert.Firing, StartsAt: at,
				Labels:      map[string]string{"pool": "vault", "vdev": fmt.Sprintf("disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WX32D70%05d-part1", i)},
				Fingerprint: fmt.Sprintf("%016x", i),
				Summary:     fmt.Sprintf("disk %d in vault/raidz2-0 is FAULTED", i),
				Description: strings.Repeat("The pool still serves data, but raidz2-0 survives one more disk failure. ", 20),
				Evidence:    map[string]string{"pool_state": "DEGRADED", "read_write_cksum": "12 / 847 / 0", "vdev_state": "FAULTED (too many errors)"},
			}}}
		data, err := bus.WrapSchema(bus.SchemaNotification, n.Host, "rules", n.Created, n)
		if err != nil {
			b.Fatal(err)
		}
		if err := bs.Publish(ctx, bus.Subject(n.Host, bus.KindAlert), data); err != nil {
			b.Fatal(err)
		}
	}
	var caches ReportCaches
	b.ReportAllocs()
	for b.Loop() {
		r, err := BuildAlertsReport(ctx, bs, 50, &caches)
		if err != nil || len(r.Recent) != 50 {
			b.Fatalf("report: %d recent notifications, %v", len(r.Recent), err)
		}
		_ = reportSum(r)
	}
}
