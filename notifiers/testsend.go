package notifiers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
)

// TestResult is the outcome of `zwatch notify test` for one channel.
type TestResult struct {
	Channel   string
	Type      string
	Delivered bool
	// Err is the service's error; Fix says what most likely cures it.
	Err  error
	Fix  string
	Took time.Duration
}

// Test sends n through every channel (or only channelName) directly, not
// through the outbox, and reports per channel. Filters are ignored: a test
// must reach every configured destination.
func Test(ctx context.Context, cfg config.NotifyConfig, channelName string, n alert.Notification) []TestResult {
	return TestWith(ctx, cfg, channelName, n, nil)
}

// TestWith is Test with the daemon's replacement guide (nil: none).
func TestWith(ctx context.Context, cfg config.NotifyConfig, channelName string, n alert.Notification, guide GuideFunc) []TestResult {
	chans, err := Build(cfg)
	if err != nil {
		return []TestResult{{Channel: channelName, Err: err, Fix: "fix the notify section of the config (zwatch config check)"}}
	}
	if cfg.Console {
		chans = append([]Channel{consoleChannel(slog.Default().With("channel", TypeConsole))}, chans...)
	}
	if channelName != "" {
		var names []string
		var pick []Channel
		for _, c := range chans {
			names = append(names, c.Name)
			if c.Name == channelName {
				pick = append(pick, c)
			}
		}
		if len(pick) == 0 {
			return []TestResult{{Channel: channelName, Err: fmt.Errorf("no channel named %q", channelName),
				Fix: "configured channels: " + strings.Join(names, ", ")}}
		}
		chans = pick
	}
	timeout := SendTimeout(cfg)
	m := RenderGuided(n, guide)
	out := make([]TestResult, len(chans))
	var wg sync.WaitGroup
	for i := range chans {
		c := &chans[i]
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			err := c.Send(sctx, m)
			r := TestResult{Channel: c.Name, Type: c.Type, Delivered: err == nil, Err: err, Took: time.Since(start)}
			if err != nil {
				r.Fix = c.Fix(err)
			}
			out[i] = r
		})
	}
	wg.Wait()
	CloseSenders(chans, timeout)
	return out
}

// SampleNotification is a realistic test page: a raidz2 disk FAULTED, with
// the full replacement context so the guide renders as it would for real.
func SampleNotification(host string) alert.Notification {
	now := time.Now().UTC().Truncate(time.Second)
	margin := 1
	serial := "WD-WX32D7088AF1"
	byID := "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_" + serial
	labels := map[string]string{"alertname": "ZpoolVdevFaulted", "host": host, "pool": "vault", "vdev": "raidz2-0", "serial": serial}
	a := alert.Alert{
		Name: "ZpoolVdevFaulted", Severity: alert.Critical, State: alert.Firing, Labels: labels,
		Fingerprint: alert.Fingerprint(labels),
		Summary:     "vault DEGRADED — disk " + serial + " FAULTED, raidz2-0 can lose 1 more disk",
		Description: "Pool vault is DEGRADED: disk " + serial + " (WDC WD40EFRX-68N32N0, 4.0 TB) in raidz2-0 was FAULTED " +
			"by ZFS after too many I/O errors. The pool still serves data, but raidz2-0 survives only one more disk failure. " +
			"Replace the disk soon.",
		Evidence: map[string]string{
			"pool_state":          "DEGRADED",
			"vdev_state":          "FAULTED (too many errors)",
			"read_write_cksum":    "12 / 847 / 0",
			"smart_reallocated":   "1392",
			"smart_pending":       "48",
			"zpool_status_action": "Replace the faulted device, or use 'zpool clear' to mark the device repaired.",
		},
		StartsAt: now.Add(-3 * time.Minute),
		Replacement: &alert.Replacement{
			Pool: "vault", TopVdev: "raidz2-0", VdevPath: byID + "-part1", VdevGUID: "9384718273645510293",
			VdevState: "FAULTED", Was: byID + "-part1", Margin: &margin,
			Disk: &disk.Identity{
				Serial: serial, WWN: "0x50014ee2b5c3d1a7", Model: "WDC WD40EFRX-68N32N0", Firmware: "82.00A82",
				ByID: byID, ByIDAll: []string{byID, "/dev/disk/by-id/wwn-0x50014ee2b5c3d1a7"},
				Kernel: "sdc", SizeBytes: 4000787030016, RotationRPM: 5400, LogicalSector: 512, PhysicalSector: 4096,
				Transport: disk.TransportSATA,
			},
		},
	}
	return alert.Notification{
		ID: "test-" + randomID(), GroupKey: "test/" + a.Fingerprint, Host: host, Status: alert.Firing,
		Alerts: []alert.Alert{a}, Created: now, Test: true,
	}
}

func randomID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return fmt.Sprint(time.Now().UnixNano())
	}
	return hex.EncodeToString(b)
}
