package delivery_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// TestCanarySinkStopsWhileTheBusIsAway: the NATS server the sink reads
// from goes away, and the sink's next read tries to recreate its ordered
// consumer (nats.go does that under its own timeouts, retrying). Stopping
// zwatch then does not wait for the server to come back.
func TestCanarySinkStopsWhileTheBusIsAway(t *testing.T) {
	srv := testutil.StartNATS(t, -1, t.TempDir())
	defer srv.Shutdown()
	octx, ocancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ocancel()
	b, err := bus.Open(octx, bus.Options{URL: srv.ClientURL(), FactSubjects: facts.StreamSubjects(), Name: "canary-test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	can := delivery.NewCanary(b, "nas1", slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- can.Sink(ctx) }()
	time.Sleep(500 * time.Millisecond)
	srv.Shutdown()
	// The read under way ends after its 10 s; the next one recreates the
	// consumer, which cannot be done while the server is away.
	time.Sleep(11 * time.Second)
	stop := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("sink: %v", err)
		}
		if took := time.Since(stop); took > time.Second {
			t.Errorf("the sink took %s to stop", took.Round(time.Millisecond))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sink did not stop within 30 s while the bus was away")
	}
}
