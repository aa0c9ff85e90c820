package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zwatch/zwatch/bus"
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
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	_, state, url := startListeningServer(t, ph.URL)
	pw := addAgent(t, state, url, "nas2")
	if nc, err := nats.Connect(url, nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("the listener took a client without credentials")
	}
	nas2 := startFleetAgent(t, bus.Options{URL: url, User: bus.AgentUser("nas2"), Password: pw}, "nas2", "b1-offline")
	for _, subj := range []string{bus.Subject("nas2", bus.KindAlert), bus.Subject("nas1", facts.ZpoolStatus.Name())} {
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
