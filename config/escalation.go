package config

import (
	"fmt"
	"time"
)

// EscalationStep is one step of notify.escalation: a critical incident not
// acknowledged After its first critical page is sent to Channels.
type EscalationStep struct {
	// After is counted from the incident's first critical page.
	After Duration `yaml:"after"`
	// Channels are channel names; they receive escalations only (and the
	// later notices of an incident escalated to them).
	Channels []string `yaml:"channels"`
}

// EscalationAfters are the steps' delays, in order: what the rule engine
// needs (rules.RulesConfig.Escalate).
func (n *NotifyConfig) EscalationAfters() []time.Duration {
	out := make([]time.Duration, 0, len(n.Escalation))
	for _, s := range n.Escalation {
		out = append(out, s.After.D())
	}
	return out
}

// EscalationStepOf is the step (from 1) whose channels include the channel
// named name, or 0 for a channel of no step (it gets the usual pages).
func (n *NotifyConfig) EscalationStepOf(name string) int {
	for i, s := range n.Escalation {
		for _, c := range s.Channels {
			if c == name {
				return i + 1
			}
		}
	}
	return 0
}

// maxEscalationSteps bounds notify.escalation: a household has two or
// three people to wake, not dozens.
const maxEscalationSteps = 8

// validateEscalation checks each step: a delay of at least a minute, later
// than the step before; channels that exist, in one step each; and some
// channel left for the usual pages.
func (n *NotifyConfig) validateEscalation(p string, errs *Errors) {
	if len(n.Escalation) > maxEscalationSteps {
		errs.add(p+".escalation", fmt.Sprint(len(n.Escalation)), "at most %d steps", maxEscalationSteps)
		return
	}
	names := map[string]bool{}
	for _, c := range n.Channels {
		names[c.Name] = true
	}
	inStep := map[string]string{}
	var prev time.Duration
	for i, s := range n.Escalation {
		sp := fmt.Sprintf("%s.escalation[%d]", p, i)
		switch d := s.After.D(); {
		case d < time.Minute:
			errs.add(sp+".after", FormatDuration(d), "must be at least 1m: how long a critical page may go unacknowledged before this step (e.g. 30m)")
		case d <= prev:
			errs.add(sp+".after", FormatDuration(d), "must be later than the step before (%s): each step waits longer", FormatDuration(prev))
		}
		prev = max(prev, s.After.D())
		if len(s.Channels) == 0 {
			errs.add(sp+".channels", nil, "empty: name at least one channel of notify.channels to send this step to")
		}
		for _, c := range s.Channels {
			switch {
			case !names[c]:
				errs.add(sp+".channels", c, "no channel of notify.channels has this name")
			case inStep[c] != "":
				errs.add(sp+".channels", c, "already in %s: a channel belongs to one step", inStep[c])
			default:
				inStep[c] = sp
			}
		}
	}
	if len(n.Escalation) > 0 && len(inStep) == len(n.Channels) && !n.Console {
		errs.add(p+".escalation", nil, "every channel is an escalation channel, so nothing gets the first page: keep at least one channel out of the steps")
	}
}
