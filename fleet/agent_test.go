package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
)

func startNATS(t *testing.T, port int, store string) *server.Server {
	t.Helper()
	return testutil.StartNATS(t, port, store)
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// zwatchServer is the embedded bus of `zwatch run` with bus.listen set.
func zwatchServer(ctx context.Context, t *testing.T, addr, state string) *bus.Bus {
	t.Helper()
	b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: state, Listen: addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// While the bus is down an agent keeps its newest Max messages, drops the
// oldest and counts them, and sends the rest in order when the bus is back;
// the heartbeat carries the counters. The bus is zwatch's embedded server
// with a listener, the agent logs in with credentials from AddAgent (what
// `zwatch fleet add-host` makes) and the server restarts on its state dir.
func TestBufferDropsOldestAndResends(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr, state := fmt.Sprintf("127.0.0.1:%d", freePort(t)), t.TempDir()
	pw, err := bus.AddAgent(state, "nas1", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	admin := zwatchServer(ctx, t, addr, state)
	defer func() { admin.Close() }()

	var buf *Buffer
	agent, err := bus.Open(ctx, bus.Options{URL: "nats://" + addr, User: bus.AgentUser("nas1"), Password: pw, NoStreams: true, InboxPrefix: bus.AgentInbox("nas1"),
		ReconnectHook: func() { buf.Wake() }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	buf = NewBuffer(agent, "nas1", 5, nil)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = buf.Run(rctx); close(done) }()
	defer func() { stop(); <-done }()

	pub := func(i int) {
		if err := buf.Publish(ctx, facts.CollectorError.Name(), "test", facts.CollectorErrorData{Collector: "test", Message: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, ok func(BufferStats) bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(buf.Stats()); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %+v", what, buf.Stats())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for i := range 3 {
		pub(i)
	}
	waitFor("first three sent", func(s BufferStats) bool { return s.Sent == 3 && s.Queued == 0 })

	admin.Close()
	for i := 3; i < 13; i++ {
		pub(i)
	}
	if err := buf.Publish(ctx, facts.Heartbeat.Name(), "zwatch", facts.HeartbeatData{Version: "t"}); err != nil {
		t.Fatal(err)
	}
	waitFor("bounded", func(s BufferStats) bool { return s.Queued == 5 && s.Dropped == 6 })

	admin = zwatchServer(ctx, t, addr, state)
	waitFor("resent", func(s BufferStats) bool { return s.Queued == 0 && s.Sent == 8 })

	cons, err := admin.JS.OrderedConsumer(ctx, bus.StreamFacts, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var hb facts.HeartbeatData
	for range 8 {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		var env bus.Envelope
		_ = json.Unmarshal(m.Data(), &env)
		if m.Subject() == bus.Subject("nas1", facts.Heartbeat.Name()) {
			_ = json.Unmarshal(env.Data, &hb)
			got = append(got, "hb")
			continue
		}
		var ce facts.CollectorErrorData
		_ = json.Unmarshal(env.Data, &ce)
		got = append(got, ce.Message)
	}
	if want := "[0 1 2 9 10 11 12 hb]"; fmt.Sprint(got) != want {
		t.Errorf("stream holds %v, want %s (oldest dropped, order kept)", got, want)
	}
	// The heartbeat was queued after 10 messages with 5 slots: 5 dropped then.
	if hb.Buffer == nil || hb.Buffer.Max != 5 || hb.Buffer.Dropped != 5 || hb.Version != "t" {
		t.Errorf("heartbeat buffer %+v version %q", hb.Buffer, hb.Version)
	}
}

// The buffer is part of the heartbeat payload now, where it was a wrapper
// around it: the bytes on the wire are the same, and a daemon's heartbeat
// still has no buffer.
func TestHeartbeatBufferWireUnchanged(t *testing.T) {
	hb := facts.HeartbeatData{Version: "t", Started: time.Unix(1, 0).UTC(),
		Collectors: map[string]facts.CollectorHealth{"smart": {Interval: time.Minute}}}
	stats := BufferStats{Queued: 1, Max: 5, Dropped: 2, Sent: 3, Retries: 4}
	wrapped, err := json.Marshal(struct {
		facts.HeartbeatData
		Buffer BufferStats `json:"buffer"`
	}{hb, stats})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := json.Marshal(hb)
	if err != nil {
		t.Fatal(err)
	}
	hb.Buffer = &stats
	withBuffer, err := json.Marshal(hb)
	if err != nil {
		t.Fatal(err)
	}
	if string(withBuffer) != string(wrapped) {
		t.Errorf("agent heartbeat\n%s\nwas\n%s", withBuffer, wrapped)
	}
	if strings.Contains(string(plain), "buffer") {
		t.Errorf("daemon heartbeat has a buffer: %s", plain)
	}
}
