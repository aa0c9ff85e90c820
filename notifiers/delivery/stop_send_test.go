package delivery_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// A send in flight when the notifiers stop (a clean shutdown, a server of
// a fleet stopping) finishes and is acknowledged: started again, the
// notifiers do not send it a second time.
func TestStopLetsTheSendInFlightFinish(t *testing.T) {
	dir := t.TempDir()
	s := notifytest.StartHTTP(t, "")
	var hits atomic.Int32
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		hits.Add(1)
		time.Sleep(time.Second) // the service takes its time to answer
		w.WriteHeader(http.StatusOK)
	})
	cfg := fastRetry(notifytest.NotifyConfig(hookTo("hook", s.URL)))
	cfg.SendTimeout = config.Duration(20 * time.Second)
	opts := delivery.Options{AckWait: 2 * time.Second}
	b := notifytest.OpenBus(t, dir)
	defer b.Close()
	notifytest.Publish(t, b, notifytest.Firing("nas1", "stop-1"))
	stop := notifytest.RunNotifiers(t, b, cfg, opts)
	<-s.Got // the send reached the service, which has not answered yet
	began := time.Now()
	stop()
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the stop took %s", took)
	}
	notifytest.RunNotifiers(t, b, cfg, opts)
	time.Sleep(4 * time.Second) // past AckWait: a redelivery would show
	if n := hits.Load(); n != 1 {
		t.Errorf("sent %d times, want once (the stop cut the send off, and it was sent again)", n)
	}
}
