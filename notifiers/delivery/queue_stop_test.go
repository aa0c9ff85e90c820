package delivery_test

import (
	"context"
	"sync"
	"testing"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// A flush cut off by the engine's stop (a shutdown, a partition handed to
// another server) is no storage failure: the storage watch hears nothing
// but the success of a later flush, and nothing is delivered directly.
func TestFlushCutOffByStopIsNoStorageFailure(t *testing.T) {
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	var mu sync.Mutex
	var reports []error
	direct := 0
	q := (&delivery.Path{
		Storage: func(part string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if part == "outbox" {
				reports = append(reports, err)
			}
		},
		Direct: func(context.Context, alert.Notification) error {
			mu.Lock()
			defer mu.Unlock()
			direct++
			return nil
		},
	}).Sender(b, nil)
	n := alert.Notification{ID: "stop-1", Host: "nas1", Status: alert.Firing, Alerts: []alert.Alert{{Name: "PoolState", State: alert.Firing, Severity: alert.Critical}}}
	q.Put(n, nil)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	q.Flush(stopped)
	mu.Lock()
	if len(reports) != 0 || direct != 0 {
		t.Errorf("a flush cut off by the stop reported %v to the storage watch, %d direct deliveries", reports, direct)
	}
	mu.Unlock()
	if q.Waiting() != 1 {
		t.Errorf("%d waiting after the cut-off flush, want the notification still there", q.Waiting())
	}
}
