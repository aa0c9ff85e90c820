// Package incident answers an incident on a person's behalf: from a shell
// (zwatch ack), or from a phone through a channel that carries answers
// (Telegram's buttons). The answer is a fact on the host's subject
// (facts.IncidentAction) that the rule engine applies; a snooze first makes
// its silence. Only the bus's users can send it: root on the machine, the
// servers of a fleet.
package incident

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/silence"
)

// ErrNotFiring: no incident of that ID fires now (it may have resolved).
var ErrNotFiring = errors.New("no such incident fires now")

// Result is what an answer did.
type Result struct {
	// Host is the host whose incident it was; Alerts its firing alerts.
	Host   string
	Alerts []alert.Alert
	// Silence is the silence a snooze made.
	Silence *silence.Silence
}

// ValidID reports whether id is an incident ID: eight lower-case hex digits.
func ValidID(id string) bool {
	return len(id) == 8 && strings.Trim(id, "0123456789abcdef") == ""
}

// Answer sends a, an answer to the incident a.Incident, to the host whose
// incident it is, once it checked that the incident fires; for a snooze
// (a.Action facts.ActionSnooze) it first makes a silence of that incident
// for snoozeFor.
func Answer(ctx context.Context, b *bus.Bus, a facts.IncidentActionData, snoozeFor time.Duration) (Result, error) {
	var res Result
	if !ValidID(a.Incident) {
		return res, fmt.Errorf("%q is not an incident ID: eight hex digits such as 3f2a9c1e", a.Incident)
	}
	cur, err := rules.ReadCurrent(ctx, b)
	if err != nil {
		return res, err
	}
	for _, al := range cur.Active() {
		if al.Incident == a.Incident && al.State == alert.Firing {
			res.Alerts = append(res.Alerts, al)
		}
	}
	if len(res.Alerts) == 0 {
		return res, fmt.Errorf("incident %s: %w", a.Incident, ErrNotFiring)
	}
	res.Host = res.Alerts[0].Labels["host"]
	if a.Action == facts.ActionSnooze {
		s, err := snooze(ctx, b, a, res.Host, res.Alerts, snoozeFor)
		if err != nil {
			return res, err
		}
		res.Silence, a.Silence, a.Until = &s, s.ID, &s.EndsAt
	}
	pub := &collectors.BusPublisher{Bus: b, Host: res.Host}
	if err := collectors.Publish(ctx, pub, facts.IncidentAction, a.Source, a); err != nil {
		return res, fmt.Errorf("send the answer to incident %s: %w", a.Incident, err)
	}
	return res, nil
}

// snooze makes the silence of a snooze: incident id on host, up to the
// worst severity of its alerts now, so that a rise still pages.
func snooze(ctx context.Context, b *bus.Bus, a facts.IncidentActionData, host string, members []alert.Alert, d time.Duration) (silence.Silence, error) {
	if d <= 0 {
		return silence.Silence{}, errors.New("a snooze needs a duration above 0")
	}
	ms, err := silence.ParseMatchers([]string{"incident=" + a.Incident, "host=" + host})
	if err != nil {
		return silence.Silence{}, err
	}
	now := time.Now().UTC().Truncate(time.Second)
	comment := a.Comment
	if comment == "" {
		comment = "snoozed by " + a.By + " (" + a.Source + ")"
	}
	s := silence.Silence{Matchers: ms, CreatedBy: a.By, Comment: comment, StartsAt: now, UpdatedAt: now, EndsAt: now.Add(d), MaxSeverity: alert.Info}
	for _, m := range members {
		if m.Severity.Rank() > s.MaxSeverity.Rank() {
			s.MaxSeverity = m.Severity
		}
	}
	if s.ID, err = silence.NewID(); err != nil {
		return s, err
	}
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return s, fmt.Errorf("open the state bucket %s: %w (an agent's credentials cannot snooze: run this on a server)", bus.StateBucket, err)
	}
	if err := silence.Create(ctx, kv, &s); err != nil {
		return s, fmt.Errorf("snooze incident %s: %w", a.Incident, err)
	}
	return s, nil
}
