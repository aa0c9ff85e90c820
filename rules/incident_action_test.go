package rules

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
)

func answer(t *testing.T, e *Engine, action, incident string, at time.Time) {
	t.Helper()
	observe(t, e, envOf(t, facts.IncidentAction.Name(), "cli", at, facts.IncidentActionData{
		Incident: incident, Action: action, By: "alice", Source: "cli"}), at)
}

// incidentOf is the incident the named alert is part of.
func incidentOf(t *testing.T, e *Engine, name string) string {
	t.Helper()
	a := find(e, name)
	if a == nil || a.Incident == "" {
		t.Fatalf("%s: no alert, or no incident: %+v", name, a)
	}
	return a.Incident
}

// One raidz2 disk fails and pages; the person acknowledges the incident:
// no repeat for two days (a warning repeats every 24 h), the alerts say
// who took it on; a second disk failing pages at once (worse than what was
// acknowledged) and ends the acknowledgement of what rose; the repair still
// sends every resolved notice. Without the acknowledgement the same two
// days repeat the page.
func TestAcknowledgedIncidentDoesNotRepeat(t *testing.T) {
	for _, ack := range []bool{true, false} {
		r := newRaidz2(t)
		e := newTestEngine()
		observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
		if first := r.step(t, e, 1, t0.Add(time.Second)); len(first) == 0 {
			t.Fatal("no page for the failed disk")
		}
		id := incidentOf(t, e, nameVdevState)
		if incidentOf(t, e, nameRedundancy) != id {
			t.Fatal("the disk's alerts are in two incidents")
		}
		if ack {
			answer(t, e, facts.ActionAck, id, t0.Add(time.Minute))
			if a := find(e, nameVdevState).Ack; a == nil || a.By != "alice" || a.Source != "cli" || a.Severity != alert.Warning {
				t.Fatalf("ack %+v", a)
			}
		}
		repeats := tickSpan(e, t0.Add(2*time.Minute), t0.Add(49*time.Hour))
		if ack && len(repeats) != 0 {
			t.Fatalf("repeats of an acknowledged incident:\n%s", strings.Join(repeats, "\n"))
		}
		if !ack {
			if len(repeats) == 0 {
				t.Fatal("no repeat without an acknowledgement: the test proves nothing")
			}
			continue
		}
		now := t0.Add(50 * time.Hour)
		worse := append(r.step(t, e, 2, now), tickSpan(e, now, now.Add(time.Minute))...)
		if !strings.Contains(strings.Join(worse, "\n"), "firing critical RedundancyMargin") {
			t.Fatalf("a second disk failing did not page despite the acknowledgement:\n%s", strings.Join(worse, "\n"))
		}
		if a := find(e, nameRedundancy); a.Ack != nil {
			t.Errorf("the acknowledgement of a warning holds for the critical: %+v", a.Ack)
		}
		now = now.Add(time.Hour)
		fixed := append(r.step(t, e, 0, now), tickSpan(e, now, now.Add(time.Minute))...)
		if !strings.Contains(strings.Join(fixed, "\n"), "resolved") {
			t.Errorf("no resolved notice after the repair:\n%s", strings.Join(fixed, "\n"))
		}
	}
}

// Unacknowledged, the repeats go on; an answer about an incident the host
// does not have changes nothing; a malformed one is refused.
func TestUnacknowledgeAndUnknownIncident(t *testing.T) {
	r := newRaidz2(t)
	e := newTestEngine()
	observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
	r.step(t, e, 1, t0.Add(time.Second))
	id := incidentOf(t, e, nameVdevState)
	answer(t, e, facts.ActionAck, "0badcafe", t0.Add(time.Minute))
	if a := find(e, nameVdevState).Ack; a != nil {
		t.Fatalf("an answer to another incident acknowledged this one: %+v", a)
	}
	answer(t, e, facts.ActionAck, id, t0.Add(time.Minute))
	answer(t, e, facts.ActionUnack, id, t0.Add(2*time.Minute))
	if a := find(e, nameVdevState).Ack; a != nil {
		t.Fatalf("still acknowledged after unack: %+v", a)
	}
	if repeats := tickSpan(e, t0.Add(3*time.Minute), t0.Add(25*time.Hour)); len(repeats) == 0 {
		t.Error("no repeat after unack")
	}
	for _, bad := range []facts.IncidentActionData{{Incident: "x; rm -rf /", Action: facts.ActionAck}, {Incident: id, Action: "delete"}} {
		if err := e.Observe(envOf(t, facts.IncidentAction.Name(), "cli", t0, bad), t0); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The acknowledgement is state: saved, and kept by the engine that loads it.
func TestAcknowledgementSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	_, kv := openStateBucket(ctx, t)
	r := newRaidz2(t)
	old := newTestEngine()
	observe(t, old, poolsEnv(t, r.Fail(0), t0), t0)
	r.step(t, old, 1, t0.Add(time.Second))
	answer(t, old, facts.ActionAck, incidentOf(t, old, nameVdevState), t0.Add(time.Minute))
	if err := old.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}
	e := newTestEngine()
	if err := e.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	if a := find(e, nameVdevState).Ack; a == nil || a.By != "alice" {
		t.Fatalf("after the restart: %+v", a)
	}
	if repeats := tickSpan(e, t0.Add(2*time.Minute), t0.Add(49*time.Hour)); len(repeats) != 0 {
		t.Errorf("repeats after the restart:\n%s", strings.Join(repeats, "\n"))
	}
}
