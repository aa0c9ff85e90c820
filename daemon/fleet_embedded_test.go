package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/catalog"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/notifiers"
)

// TestFleetEmbeddedListener: `zwatch run --role server` with bus.listen
// and no external cluster. An agent added while it runs (what `zwatch
// fleet add-host` does) logs in with its own credentials, its real zpool
// collectors' OFFLINE disk reaches the phone, and it cannot publish an
// alert or another host's facts.
func TestFleetEmbeddedListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	state := t.TempDir()
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	cfg, err := config.Parse(strings.NewReader(fmt.Sprintf(`
host: srv
role: server
state_dir: %s
bus:
  listen: %s
rules:
  group_wait: 0s
notify:
  console: false
  channels:
    - name: phone
      type: webhook
      url: %s
      min_severity: info
`, state, addr, ph.URL)), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, &cfg.Config, Options{}, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("server did not stop")
		}
	}()
	// The server made its credentials at start; the agent comes later.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(bus.AuthPath(state)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no credentials file after start")
		}
	}
	pw, err := bus.AddAgent(state, "nas2", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	url := "nats://" + addr
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		nc, err := nats.Connect(url, nats.UserInfo("nas2", pw), nats.Timeout(5*time.Second), nats.NoReconnect())
		if err == nil {
			nc.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent not let in without a restart: %v", err)
		}
	}
	if nc, err := nats.Connect(url, nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("the listener took a client without credentials")
	}
	nas2 := startFleetAgent(t, bus.Options{URL: url, User: bus.AgentUser("nas2"), Password: pw}, "nas2", "b1-offline")
	for _, subj := range []string{bus.Subject("nas2", bus.KindAlert), bus.Subject("nas1", facts.KindZpoolStatus)} {
		pctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		msg, _ := bus.Wrap(bus.KindAlert, "nas2", "forger", time.Now(), map[string]string{"id": "forged"})
		if err := nas2.b.Publish(pctx, subj, msg); err == nil {
			t.Errorf("agent nas2 could publish on %s", subj)
		}
		c()
	}
	p := ph.Wait(t, "nas2 firing", func(p notifiers.WebhookPayload) bool { return p.Host == "nas2" && p.Status == "firing" })
	t.Logf("nas2 paged through the embedded listener: %s", p.Summary)
	if n := ph.Count(func(p notifiers.WebhookPayload) bool { return p.Host != "nas2" || p.ID == "forged" }); n != 0 {
		t.Errorf("%d notifications not from nas2's own facts", n)
	}
}
