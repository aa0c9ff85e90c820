package history

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
)

// A person's answers to an incident are events of the host's history, with
// who, how and the incident; the newest one, handed again when the writer
// starts after a restart, is stored once.
func TestActionsAreEvents(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	publish := func(b interface {
		Publish(context.Context, string, []byte) error
	}, d facts.IncidentActionData, when time.Time) {
		t.Helper()
		if err := b.Publish(context.Background(), factSubject("nas1", facts.IncidentAction.Name()), wrap(t, facts.IncidentAction.Name(), "nas1", when, d)); err != nil {
			t.Fatal(err)
		}
	}
	b := openBus(t, dir)
	s, stop := runStore(t, b)
	publish(b, facts.IncidentActionData{Incident: "3f2a9c1e", Action: facts.ActionAck, By: "alice", Source: "telegram", Comment: "new disk ordered"}, at)
	until := at.Add(24 * time.Hour)
	publish(b, facts.IncidentActionData{Incident: "3f2a9c1e", Action: facts.ActionSnooze, By: "root", Source: "cli", Until: &until, Silence: "abc"}, at.Add(time.Minute))
	waitEvents(t, s, EventAction, 2)
	stop()
	b.Close()

	b = openBus(t, dir)
	defer b.Close()
	s, stop = runStore(t, b)
	defer stop()
	waitEvents(t, s, EventAction, 2)
	ev, err := s.Events(context.Background(), "nas1", at.Add(-time.Hour), at.Add(time.Hour), EventAction)
	if err != nil {
		t.Fatal(err)
	}
	if ev[0].Incident != "3f2a9c1e" || ev[0].Status != facts.ActionAck ||
		!strings.Contains(ev[0].Summary, "acknowledged by alice (telegram): new disk ordered") ||
		!strings.Contains(ev[1].Summary, "snoozed by root (cli) until 2026-12-08 05:00 UTC") {
		t.Errorf("events %+v", ev)
	}
}
