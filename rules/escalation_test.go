package rules

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
)

// escalations ticks e from from to to every minute and returns the
// escalation pages sent, and the other notifications.
func escalations(e *Engine, from, to time.Time) (up, rest []alert.Notification) {
	for at := from; !at.After(to); at = at.Add(time.Minute) {
		for _, n := range e.Tick(at) {
			if n.Escalation > 0 {
				up = append(up, n)
			} else {
				rest = append(rest, n)
			}
		}
	}
	return up, rest
}

// notify.escalation 30m then 2h: two disks of a raidz2 fail (critical, no
// redundancy left) and nobody answers. The first step goes out 30 min after
// the critical page, the second at 2 h, each once and to its step, with
// the whole incident; the repair's resolved notice tells both steps.
// Acknowledged within the half hour, nothing escalates.
func TestUnacknowledgedCriticalEscalates(t *testing.T) {
	for _, ack := range []bool{false, true} {
		r := newRaidz2(t)
		e := newTestEngine(func(c *configRules) { c.Escalate = []time.Duration{30 * time.Minute, 2 * time.Hour} })
		observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
		paged := t0.Add(time.Second)
		if sent := r.step(t, e, 2, paged); len(sent) == 0 {
			t.Fatal("no critical page")
		}
		if ack {
			answer(t, e, facts.ActionAck, incidentOf(t, e, nameRedundancy), paged.Add(10*time.Minute))
		}
		up, _ := escalations(e, paged.Add(time.Minute), paged.Add(29*time.Minute))
		if len(up) != 0 {
			t.Fatalf("escalated before 30 min: %+v", up)
		}
		up, _ = escalations(e, paged.Add(30*time.Minute), paged.Add(3*time.Hour))
		if ack {
			if len(up) != 0 {
				t.Errorf("an acknowledged incident escalated: %d pages", len(up))
			}
			continue
		}
		if len(up) != 2 || up[0].Escalation != 1 || up[1].Escalation != 2 {
			t.Fatalf("escalations %+v, want step 1 then step 2", up)
		}
		if at := up[0].Created.Sub(paged); at < 30*time.Minute || at > 32*time.Minute {
			t.Errorf("step 1 sent %s after the page", at)
		}
		if at := up[1].Created.Sub(paged); at < 2*time.Hour || at > 2*time.Hour+2*time.Minute {
			t.Errorf("step 2 sent %s after the page", at)
		}
		if up[0].Status != alert.Firing || up[0].MaxSeverity() != alert.Critical || len(up[0].Alerts) < 2 || up[0].ID == up[1].ID {
			t.Errorf("step 1 carries %+v", up[0])
		}
		now := paged.Add(4 * time.Hour)
		observe(t, e, poolsEnv(t, r.Fail(0), now), now)
		_, rest := escalations(e, now, now.Add(2*time.Minute))
		resolvedToSteps := false
		for _, n := range rest {
			if n.Status == alert.Resolved && n.Escalated == 2 {
				resolvedToSteps = true
			}
		}
		if !resolvedToSteps {
			t.Errorf("the resolved notice does not reach the escalation's channels: %+v", rest)
		}
	}
}

// Warnings never escalate: a single failed disk of a raidz2 is paged and
// repeated, never sent to the escalation's channels.
func TestWarningsDoNotEscalate(t *testing.T) {
	r := newRaidz2(t)
	e := newTestEngine(func(c *configRules) { c.Escalate = []time.Duration{30 * time.Minute} })
	observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
	r.step(t, e, 1, t0.Add(time.Second))
	if up, _ := escalations(e, t0.Add(time.Minute), t0.Add(3*time.Hour)); len(up) != 0 {
		t.Errorf("a warning escalated: %+v", up)
	}
}
