package delivery

import (
	"log/slog"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// A delivered notification's log line gives each leg of its fact's path
// and the channel's own, in milliseconds; unknown times are skipped.
func TestLegsOfADeliveredNotification(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 18, 28, 52, 0, time.UTC)
	tm := &alert.Timing{Event: t0, Read: t0.Add(300 * time.Millisecond), Judged: t0.Add(350 * time.Millisecond), Outbox: t0.Add(360 * time.Millisecond)}
	got := map[string]int64{}
	for _, a := range legs(tm, t0.Add(900*time.Millisecond)).Value.Group() {
		got[a.Key] = a.Value.Int64()
	}
	want := map[string]int64{"event→read": 300, "read→judged": 50, "judged→outbox": 10, "to_channel": 540}
	if len(got) != len(want) {
		t.Fatalf("legs %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	if a := legs(nil, t0); a.Key != "legs_ms" || len(a.Value.Group()) != 0 || a.Value.Kind() != slog.KindGroup {
		t.Errorf("no timing: %v", a)
	}
}
