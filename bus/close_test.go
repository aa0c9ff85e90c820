package bus

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"

	"github.com/nats-io/nats-server/v2/server"
)

// A bus closed while its connection reconnects — the NATS node it was on
// has just gone and another (here the same, restarted) takes it within a
// second — still delivers what it published meanwhile: the outbox's
// hand-back of queued notifications at shutdown is such a message.
func TestCloseWhileReconnectingDelivers(t *testing.T) {
	port, store := testutil.FreePort(t), t.TempDir()
	start := func() *server.Server { return testutil.StartNATS(t, port, store) }
	srv := start()
	defer func() { srv.Shutdown() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	b, err := Open(ctx, Options{URL: url, FactSubjects: []string{"zwatch.v1.*.heartbeat"}, Name: "close-test"}, nil)
	if err != nil {
		t.Fatal(err)
	}

	srv.Shutdown()
	srv.WaitForShutdown()
	for !b.NC.IsReconnecting() && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond) // the client has noticed
	}
	msg, _ := Wrap("notification", "nas1", "rules", time.Now(), map[string]string{"id": "handed-back"})
	if err := b.NC.Publish(Subject("nas1", KindAlert), msg); err != nil {
		t.Fatal(err) // buffered while reconnecting
	}
	restarted := make(chan *server.Server)
	go func() {
		time.Sleep(300 * time.Millisecond)
		restarted <- start()
	}()
	b.Close()
	srv = <-restarted

	check, err := Open(ctx, Options{URL: url, NoStreams: true, Name: "close-test-check"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	st, err := check.JS.Stream(ctx, StreamAlerts)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("%d messages in %s after Close, want the one published while reconnecting", info.State.Msgs, StreamAlerts)
	}
}
