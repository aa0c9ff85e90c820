package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/model/alert"
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
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	cfg, state, url := startListeningServer(t, ph.URL)

	// The server's own command connection, as the CLI opens it.
	lo, err := bus.LocalClient(BusOptions(cfg))
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

	pw := addAgent(t, state, url, "nas2")
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
