package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/silence"
	"github.com/zwatch/zwatch/views/statusview"
)

// AlertsReport is what `zwatch alerts` shows: alerts firing now, the recent
// notifications sent to people, and notifications no channel could deliver.
type AlertsReport struct {
	GeneratedAt time.Time             `json:"generated_at"`
	Active      []alert.Alert         `json:"active"`
	Recent      []alert.Notification  `json:"recent"`
	DeadLetters []delivery.DeadLetter `json:"dead_letters"`
	// Silences are the silences pending or active (zwatch silence list).
	Silences []silence.Silence `json:"silences"`
}

// SnapshotFile is where the daemon keeps the latest AlertsReport, so that
// `zwatch alerts` works while the embedded bus has no network listener.
const SnapshotFile = "alerts.json"

// ReportCaches keep what a report read between calls: the recent
// notifications and the rule state, each read again when its stream moved.
type ReportCaches struct {
	Recent  statusview.RecentCache
	Current rules.CurrentCache
}

// BuildAlertsReport reads the report from the bus, through caches when not
// nil (a daemon's snapshotter; a command reads once).
func BuildAlertsReport(ctx context.Context, b *bus.Bus, recent int, caches *ReportCaches) (AlertsReport, error) {
	r := AlertsReport{GeneratedAt: time.Now().UTC()}
	var recentCache *statusview.RecentCache
	var currentCache *rules.CurrentCache
	if caches != nil {
		recentCache, currentCache = &caches.Recent, &caches.Current
	}
	cur, err := currentCache.Read(ctx, b)
	if err != nil {
		return r, fmt.Errorf("active alerts: %w", err)
	}
	r.Active, r.Silences = cur.Active(), cur.Silences(false)
	if r.DeadLetters, err = delivery.DeadLetters(ctx, b.JS); err != nil {
		return r, fmt.Errorf("dead letters: %w", err)
	}
	if r.Recent, _, err = recentCache.Read(ctx, b.JS, recent); err != nil {
		return r, fmt.Errorf("recent notifications: %w", err)
	}
	return r, nil
}

// WriteSnapshot stores the report atomically under the state dir.
func WriteSnapshot(stateDir string, r AlertsReport) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(stateDir, SnapshotFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o640); err != nil {
		return fmt.Errorf("write alerts snapshot: %w", err)
	}
	return os.Rename(tmp, filepath.Join(stateDir, SnapshotFile))
}

// ReadSnapshot reads the daemon's latest report.
func ReadSnapshot(stateDir string) (AlertsReport, error) {
	var r AlertsReport
	data, err := os.ReadFile(filepath.Join(stateDir, SnapshotFile))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("alerts snapshot %s: %w", filepath.Join(stateDir, SnapshotFile), err)
	}
	return r, nil
}

// snapshotRewrite is how often an unchanged snapshot is written again, so
// that its generated_at stays within the minute `zwatch alerts` trusts.
const snapshotRewrite = 30 * time.Second

// snapshotter refreshes the snapshot every few seconds and at shutdown. An
// unchanged report is not rewritten (every 30 s at most): the file is
// ~100 KB with fifty notifications, and rewriting it every 5 s cost a small
// box's disk and CPU for nothing.
func snapshotter(b *bus.Bus, stateDir string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		var lastSum [sha256.Size]byte
		var caches ReportCaches
		var lastWrite time.Time
		for {
			stop := false
			select {
			case <-ctx.Done():
				stop = true
			case <-t.C:
			}
			wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r, err := BuildAlertsReport(wctx, b, 50, &caches)
			cancel()
			if stop {
				if err == nil {
					_ = WriteSnapshot(stateDir, r)
				}
				return nil
			}
			if err != nil && ctx.Err() == nil {
				return err
			}
			sum := reportSum(r)
			if sum == lastSum && time.Since(lastWrite) < snapshotRewrite {
				continue
			}
			// A full state disk is the storage watch's to page; the
			// snapshot is written again once there is space.
			if WriteSnapshot(stateDir, r) == nil {
				lastSum, lastWrite = sum, time.Now()
			}
		}
	}
}

// reportSum identifies a report's content, its generation time left out.
func reportSum(r AlertsReport) [sha256.Size]byte {
	r.GeneratedAt = time.Time{}
	// Encoded straight into the hash, not copied out first: this runs
	// every few seconds for a report that rarely changes.
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(r)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
