package rules

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules/pipeline"
)

// observeAction applies a person's answer to an incident of the host: an
// acknowledgement stops its repeats (pipeline.Acknowledge), unack lets them
// go on. A snooze is a silence the command made; here it is only logged.
// An answer about no incident the host has changes nothing: the incident
// may have resolved meanwhile.
func observeAction(o observation, env bus.Envelope, d *facts.IncidentActionData) error {
	e, h, now := o.e, o.h, o.now
	if !validIncident(d.Incident) {
		return fmt.Errorf("decode %s from %s: incident %q is not an incident ID", env.Schema, env.Host, d.Incident)
	}
	var ack *alert.Ack
	switch d.Action {
	case facts.ActionAck:
		ack = &alert.Ack{By: d.By, Source: d.Source, At: now.UTC(), Comment: d.Comment}
	case facts.ActionUnack:
	case facts.ActionSnooze:
		e.log.Info("incident snoozed", "host", env.Host, "incident", d.Incident, "by", d.By, "source", d.Source, "silence", d.Silence, "until", d.Until)
		return nil
	default:
		return fmt.Errorf("decode %s from %s: action %q: want %s, %s or %s", env.Schema, env.Host, d.Action, facts.ActionAck, facts.ActionUnack, facts.ActionSnooze)
	}
	n := pipeline.Acknowledge(&h.Book, d.Incident, ack)
	if n > 0 {
		h.dirty = true
	}
	e.log.Info("incident "+d.Action, "host", env.Host, "incident", d.Incident, "by", d.By, "source", d.Source, "alerts", n)
	return nil
}

// validIncident: eight lower-case hex digits (pipeline.IncidentID).
func validIncident(id string) bool {
	return len(id) == 8 && strings.Trim(id, "0123456789abcdef") == ""
}
