package notifiers

import (
	"strings"
	"testing"

	"github.com/zwatch/zwatch/model/alert"
)

// Who gets what of an escalation: the usual channel gets the usual pages
// and never an escalation; a step's channel gets that step's page only,
// then the incident's later notices, and nothing of incidents not
// escalated to it.
func TestEscalationSelect(t *testing.T) {
	crit := alert.Alert{Name: "RedundancyMargin", Severity: alert.Critical, State: alert.Firing, Labels: map[string]string{"pool": "tank"}}
	page := alert.Notification{ID: "p", Status: alert.Firing, Alerts: []alert.Alert{crit}}
	up1, up2 := page, page
	up1.Escalation, up1.Escalated = 1, 1
	up2.Escalation, up2.Escalated = 2, 2
	later := page
	later.Escalated = 1
	usual := Channel{Name: "me", MinSeverity: alert.Warning, SendResolved: true}
	partner := Channel{Name: "partner", MinSeverity: alert.Warning, SendResolved: true, EscalationStep: 1}
	loud := Channel{Name: "loud", MinSeverity: alert.Warning, SendResolved: true, EscalationStep: 2}
	for _, c := range []struct {
		ch   Channel
		n    alert.Notification
		want bool
	}{
		{usual, page, true}, {usual, up1, false}, {usual, later, true},
		{partner, page, false}, {partner, up1, true}, {partner, up2, false}, {partner, later, true},
		{loud, up1, false}, {loud, up2, true}, {loud, later, false},
	} {
		if _, got := c.ch.Select(c.n); got != c.want {
			t.Errorf("%s gets escalation %d escalated %d: %v, want %v", c.ch.Name, c.n.Escalation, c.n.Escalated, got, c.want)
		}
	}
	m := Render(up1)
	if !strings.HasPrefix(m.Summary, "[ESCALATED] [CRITICAL]") || !strings.Contains(m.Text, "Nobody has acknowledged this critical incident") {
		t.Errorf("an escalation page says %q:\n%s", m.Summary, m.Text)
	}
}
