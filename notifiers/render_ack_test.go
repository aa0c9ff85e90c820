package notifiers

import (
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// A page names its incident and how to answer it; an acknowledged alert
// says who took it on. A resolved notice offers no answer.
func TestRenderIncidentAndAcknowledgement(t *testing.T) {
	at := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	a := alert.Alert{Name: "VdevState", Severity: alert.Warning, State: alert.Firing, Summary: "disk sdb in tank is OFFLINE",
		Labels: map[string]string{"host": "nas1", "pool": "tank"}, StartsAt: at, Incident: "3f2a9c1e",
		Ack: &alert.Ack{By: "alice", Source: "telegram", At: at.Add(time.Minute), Severity: alert.Warning, Comment: "new disk ordered"}}
	m := Render(alert.Notification{ID: "n1", Host: "nas1", Status: alert.Firing, Alerts: []alert.Alert{a}, Created: at})
	for _, want := range []string{"Acknowledged by alice (telegram) at 2026-12-07 05:01:00 UTC: new disk ordered", "Incident 3f2a9c1e: `zwatch ack 3f2a9c1e`"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	if !strings.Contains(m.HTML, "<code>zwatch ack 3f2a9c1e</code>") || !strings.Contains(m.HTML, "Acknowledged by alice") {
		t.Errorf("HTML:\n%s", m.HTML)
	}
	end := at.Add(time.Hour)
	a.State, a.EndsAt = alert.Resolved, &end
	m = Render(alert.Notification{ID: "n2", Host: "nas1", Status: alert.Resolved, Alerts: []alert.Alert{a}, Created: end})
	if strings.Contains(m.Text, "zwatch ack") || strings.Contains(m.Text, "Acknowledged") {
		t.Errorf("a resolved notice offers an answer:\n%s", m.Text)
	}
}
