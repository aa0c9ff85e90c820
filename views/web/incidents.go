package web

import (
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/tools/replace"
)

// The page shows incidents as the notifications do: one card per incident,
// ranked by rules.Incidents (data at risk before monitoring and upkeep,
// then severity, then the redundancy left), its alerts inside, worst
// first, the replacement guide once, and, with answer links on, buttons
// to acknowledge or snooze it.

type incidentView struct {
	rules.Incident
	// Title is the worst alert's summary; More counts the others.
	Title string
	More  int
	// Members are its alerts; Steps the guide of the first that has one.
	Members []alertView
	Steps   []replace.Step
	// Ack is set when every firing alert is acknowledged: the first's.
	Ack *alert.Ack
	// Links answer it (answerButtons).
	Links []channel.Link
}

func incidentViews(alerts []alert.Alert) []incidentView {
	var out []incidentView
	for _, in := range rules.Incidents(alerts) {
		v := incidentView{Incident: in, Title: in.Alerts[0].Summary, More: len(in.Alerts) - 1}
		acked := 0
		firing := 0
		for _, a := range in.Alerts {
			av := alertView{Alert: a}
			if v.Steps == nil {
				v.Steps = replace.GuideSteps(a, replace.GuideOptions{})
			}
			v.Members = append(v.Members, av)
			if a.State == alert.Firing {
				firing++
				if a.Ack != nil {
					acked++
					if v.Ack == nil {
						v.Ack = a.Ack
					}
				}
			}
		}
		if acked == 0 || acked < firing {
			v.Ack = nil
		}
		out = append(out, v)
	}
	return out
}

// answerButtons gives each firing incident of the page links to answer it
// (the confirmation page of an answer link), when the page answers: a
// logged-in user, who could follow a notification's link, may as well
// answer here.
func (s *server) answerButtons(d *pageData) {
	a := s.o.Answers
	if a == nil || len(s.o.Config.Users) == 0 {
		return
	}
	for i := range d.Incidents {
		in := &d.Incidents[i]
		if !in.Firing || in.ID == "" {
			continue
		}
		for _, c := range answer.Choices() {
			if c.Verb == answer.Ack && in.Ack != nil {
				continue // acknowledged already
			}
			l, err := answer.NewLink(answer.Action{Verb: c.Verb, Incident: in.ID}, d.Host.Host, time.Now())
			if err != nil {
				return
			}
			in.Links = append(in.Links, channel.Link{Label: c.Label, URL: "/answer?t=" + a.Key.SignLink(l)})
		}
		s.replaceLink(in, d.Host.Host)
	}
}
