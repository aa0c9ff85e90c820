package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Writes that only time out (the loaded e2e guest: state saves timing out
// for 5-10 s while zpool took 16 s) are paged after slowHold, not after
// the 5 s a refused write gets; a refusal in the spell shortens it again.
func TestSlowStoreIsPagedLater(t *testing.T) {
	var sent []alert.Notification
	s := newStorageWatch(t.TempDir(), "nas1", nil, slog.New(slog.DiscardHandler))
	s.send = func(_ context.Context, n alert.Notification) ([]string, error) {
		sent = append(sent, n)
		return []string{"phone"}, nil
	}
	s.free = func(string) (uint64, error) { return 1 << 30, nil }
	timeout := fmt.Errorf("save rule state of nas1: %w", context.DeadlineExceeded)

	s.report("state", timeout)
	start := s.parts["state"].since
	s.check(context.Background(), start.Add(10*time.Second))
	if len(sent) != 0 || s.problem() != "" {
		t.Fatalf("paged %d times after 10 s of timeouts (problem %q); want none before %s", len(sent), s.problem(), slowHold)
	}
	s.report("state", timeout)
	s.check(context.Background(), start.Add(slowHold+time.Second))
	if len(sent) != 1 {
		t.Fatalf("paged %d times after %s of timeouts, want once", len(sent), slowHold+time.Second)
	}

	refused := newStorageWatch(t.TempDir(), "nas1", nil, slog.New(slog.DiscardHandler))
	var refusedSent int
	refused.send = func(context.Context, alert.Notification) ([]string, error) { refusedSent++; return nil, nil }
	refused.free = s.free
	refused.report("state", timeout)
	refused.report("outbox", errors.New("nats: insufficient resources"))
	since := refused.parts["state"].since
	refused.check(context.Background(), since.Add(6*time.Second))
	if refusedSent != 1 {
		t.Fatalf("a refused write with a timeout: paged %d times after 6 s, want once", refusedSent)
	}
}
