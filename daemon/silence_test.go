package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/catalog"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/silence"
)

// A fleet server (bus.listen) and an agent, nas2, whose real zpool
// collectors report a disk taken offline: a silence made on the server
// the way `zwatch silence add` makes it (its loopback client, with the
// credentials in the state directory) keeps nas2's VdevState from the
// phone while the rest of the page goes out; the alert shows as silenced;
// expired, the held-back page arrives.
func TestFleetSilenceAppliesToAnAgentsAlerts(t *testing.T) {
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
http:
  listen: ""
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
	logs := &syncBuf{}
	go func() { done <- Run(ctx, &cfg.Config, Options{}, slog.New(slog.NewTextHandler(logs, nil))) }()
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	}()
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
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(bus.AuthPath(state)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no credentials file after start")
		}
	}

	// The server's own command connection, as the CLI opens it.
	lo, err := bus.LocalClient(BusOptions(&cfg.Config))
	if err != nil {
		t.Fatal(err)
	}
	octx, ocancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer ocancel()
	cli, err := bus.Open(octx, lo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// The server makes its streams and bucket after its listener.
	var kv jetstream.KeyValue
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if kv, err = cli.JS.KeyValue(octx, bus.StateBucket); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	ms, err := silence.ParseMatchers([]string{"VdevState", "host=nas2"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := silence.NewID()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	s := silence.Silence{ID: id, Matchers: ms, StartsAt: now, EndsAt: now.Add(time.Hour), CreatedBy: "root", Comment: "disk swap tonight", MaxSeverity: alert.Critical, UpdatedAt: now}
	if err := silence.Create(octx, kv, &s); err != nil {
		t.Fatal(err)
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
			t.Fatalf("agent not let in: %v", err)
		}
	}
	startFleetAgent(t, bus.Options{URL: url, User: bus.AgentUser("nas2"), Password: pw}, "nas2", "b1-offline")
	page := ph.Wait(t, "nas2 firing", func(p notifiers.WebhookPayload) bool { return p.Host == "nas2" && p.Status == "firing" })
	t.Logf("nas2 paged: %s", page.Summary)
	time.Sleep(3 * time.Second)
	if n := ph.Count(func(p notifiers.WebhookPayload) bool { return hasAlert(p.Notification, "VdevState") }); n != 0 {
		t.Fatalf("%d pages carried the silenced VdevState", n)
	}
	var marked bool
	for deadline := time.Now().Add(10 * time.Second); !marked && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		active, err := rules.Active(octx, cli)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range active {
			marked = marked || a.Name == "VdevState" && a.Labels["host"] == "nas2" && a.State == alert.Firing && a.Silenced != nil && a.Silenced.ID == id
		}
	}
	if !marked {
		t.Fatal("nas2's VdevState is not shown as silenced")
	}

	cur, err := silence.Get(octx, kv, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := silence.Expire(octx, kv, cur, "root", time.Now()); err != nil {
		t.Fatal(err)
	}
	p := ph.Wait(t, "the held-back VdevState", func(p notifiers.WebhookPayload) bool {
		return p.Host == "nas2" && hasAlert(p.Notification, "VdevState")
	})
	t.Logf("after the silence: %s", p.Summary)
	if n := ph.Count(func(p notifiers.WebhookPayload) bool { return hasAlert(p.Notification, rules.SilenceExpiredAlert) }); n != 0 {
		t.Errorf("a silence expired by hand sent %d expiry notices", n)
	}
}
