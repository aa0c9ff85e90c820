package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/incident"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/rules"
)

// A fleet server (bus.listen) and an agent, nas2, whose real zpool
// collectors report a disk taken offline: `zwatch ack` on the server (its
// loopback client, as the CLI opens it) answers nas2's incident, which the
// server's engine applies to nas2's state: its alerts show acknowledged by
// root (cli), and the answer is kept in the state bucket the servers
// share, so it holds after a restart or on another server.
func TestFleetAckOfAnAgentsIncident(t *testing.T) {
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	cfg, state, url := startListeningServer(t, ph.URL)
	lo, err := bus.LocalClient(BusOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli, err := bus.Open(ctx, lo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	pw := addAgent(t, state, url, "nas2")
	startFleetAgent(t, bus.Options{URL: url, User: bus.AgentUser("nas2"), Password: pw}, "nas2", "b1-offline")
	page := ph.Wait(t, "nas2 firing", func(p notifiers.WebhookPayload) bool { return p.Host == "nas2" && p.Status == "firing" })
	var id string
	for _, a := range page.Notification.Alerts {
		if a.Incident != "" {
			id = a.Incident
		}
	}
	if id == "" {
		t.Fatalf("nas2's page names no incident: %+v", page.Notification.Alerts)
	}
	res, err := incident.Answer(ctx, cli, facts.IncidentActionData{Incident: id, Action: facts.ActionAck, By: "root", Source: "cli"}, 0)
	if err != nil || res.Host != "nas2" {
		t.Fatalf("ack %s: host %q, %v", id, res.Host, err)
	}
	var acked int
	for deadline := time.Now().Add(15 * time.Second); acked == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		active, err := rules.Active(ctx, cli)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range active {
			if a.Incident == id && a.State == alert.Firing && a.Ack != nil && a.Ack.By == "root" && a.Ack.Source == "cli" {
				acked++
			}
		}
	}
	if acked == 0 {
		t.Fatalf("nas2's incident %s is not shown acknowledged", id)
	}
}
