package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/rules"
)

// AlertsReport is what `zwatch alerts` shows: alerts firing now, the recent
// notifications sent to people, and notifications no channel could deliver.
type AlertsReport struct {
	GeneratedAt time.Time              `json:"generated_at"`
	Active      []alert.Alert          `json:"active"`
	Recent      []alert.Notification   `json:"recent"`
	DeadLetters []notifiers.DeadLetter `json:"dead_letters"`
}

// SnapshotFile is where the daemon keeps the latest AlertsReport, so that
// `zwatch alerts` works while the embedded bus has no network listener.
const SnapshotFile = "alerts.json"

// BuildAlertsReport reads the report from the bus.
func BuildAlertsReport(ctx context.Context, b *bus.Bus, recent int) (AlertsReport, error) {
	r := AlertsReport{GeneratedAt: time.Now().UTC()}
	var err error
	if r.Active, err = rules.Active(ctx, b); err != nil {
		return r, fmt.Errorf("active alerts: %w", err)
	}
	if r.DeadLetters, err = notifiers.DeadLetters(ctx, b.JS); err != nil {
		return r, fmt.Errorf("dead letters: %w", err)
	}
	if r.Recent, err = recentNotifications(ctx, b.JS, recent); err != nil {
		return r, fmt.Errorf("recent notifications: %w", err)
	}
	return r, nil
}

// recentNotifications reads the last n notifications of the outbox stream.
func recentNotifications(ctx context.Context, js jetstream.JetStream, n int) ([]alert.Notification, error) {
	st, err := js.Stream(ctx, bus.StreamAlerts)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, err
	}
	out := []alert.Notification{}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		return out, nil
	}
	first := info.State.FirstSeq
	if last >= uint64(n) && last-uint64(n)+1 > first {
		first = last - uint64(n) + 1
	}
	for seq := first; seq <= last; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue // deleted or expired in between
		}
		var note alert.Notification
		if _, err := bus.Decode(m.Data, "notification", &note); err == nil && !strings.HasPrefix(note.ID, rules.CanaryPrefix) {
			out = append(out, note)
		}
	}
	return out, nil
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

// snapshotter refreshes the snapshot every few seconds and at shutdown.
func snapshotter(b *bus.Bus, stateDir string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			stop := false
			select {
			case <-ctx.Done():
				stop = true
			case <-t.C:
			}
			wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r, err := BuildAlertsReport(wctx, b, 50)
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
			// A full state disk is the storage watch's to page; the
			// snapshot is written again once there is space.
			_ = WriteSnapshot(stateDir, r)
		}
	}
}
