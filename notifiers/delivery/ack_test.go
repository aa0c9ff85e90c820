package delivery_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// TestOutboxAckConfirmedAfterTheBusReturns: the NATS server goes away
// while the webhook accepts a page, so the acknowledgement cannot be
// confirmed; the server comes back 7 s later with the same store. The
// channel confirms the acknowledgement then, instead of leaving the page
// pending until AckWait (a minute here) for a redelivery, and the page is
// delivered once.
func TestOutboxAckConfirmedAfterTheBusReturns(t *testing.T) {
	port, store := testutil.FreePort(t), t.TempDir()
	start := func() *server.Server { return testutil.StartNATS(t, port, store) }
	srv := start()
	t.Cleanup(func() { srv.Shutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), FactSubjects: facts.StreamSubjects(), Name: "ack-test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	down := make(chan time.Time, 1)
	hook := notifytest.StartHTTP(t, "")
	hook.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		hook.Record(h)
		if len(hook.All()) == 1 {
			srv.Shutdown() // the bus goes away before the sender hears back
			srv.WaitForShutdown()
			down <- time.Now()
		}
		w.WriteHeader(http.StatusOK)
	})
	cfg := notifytest.NotifyConfig(hookTo("hook", hook.URL))
	notifytest.RunNotifiers(t, b, cfg, delivery.Options{AckWait: time.Minute})
	notifytest.Publish(t, b, incident("tank", "tank-fire", alert.Critical))

	wentDown := <-down
	time.Sleep(time.Until(wentDown.Add(7 * time.Second))) // past the first confirmation's 5 s
	srv = start()
	back := time.Now()
	pending := func() int {
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		c, err := b.JS.Consumer(ictx, bus.StreamAlerts, notifiers.ConsumerName("hook"))
		if err != nil {
			return -1
		}
		info, err := c.Info(ictx)
		if err != nil {
			return -1
		}
		return info.NumAckPending
	}
	notifytest.WaitFor(t, 20*time.Second, "the acknowledgement", func() bool { return pending() == 0 })
	t.Logf("acknowledged %s after the server was back", time.Since(back).Round(time.Millisecond))
	if n := len(hook.All()); n != 1 {
		t.Errorf("%d requests for one notification", n)
	}
}
