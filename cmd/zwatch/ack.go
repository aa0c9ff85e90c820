package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/incident"
	"github.com/zwatch/zwatch/silence"
)

// The incident commands answer a page from a shell: the same answers the
// phone's buttons give, recorded with their source ("cli") and who.

func newAckCmd(g *globals) *cobra.Command {
	var comment string
	cmd := &cobra.Command{
		Use:   "ack INCIDENT",
		Short: "Acknowledge an incident: its page is not repeated (a change for the worse still pages)",
		Long: `Say that someone is on incident INCIDENT (the ID zwatch alerts and every page
show, such as 3f2a9c1e): its alerts are no longer repeated. A change for
the worse pages again despite it: a higher severity (which also ends the
acknowledgement of what rose) or a new alert in the incident. The
resolved notice still goes out. zwatch alerts and the status page show who
acknowledged it and when; zwatch unack takes it back.

The answer goes to the running zwatch through its bus, so only the user
zwatch runs as (root) can send it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return answerIncident(cmd, g, args[0], facts.IncidentActionData{Action: facts.ActionAck, Comment: strings.TrimSpace(comment)})
		},
	}
	cmd.Flags().StringVar(&comment, "comment", "", "a word for whoever looks later: \"new disk ordered\"")
	return cmd
}

func newUnackCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "unack INCIDENT",
		Short: "Take an acknowledgement back: the incident's page repeats again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return answerIncident(cmd, g, args[0], facts.IncidentActionData{Action: facts.ActionUnack})
		},
	}
}

func newSnoozeCmd(g *globals) *cobra.Command {
	var comment string
	cmd := &cobra.Command{
		Use:   "snooze INCIDENT DURATION",
		Short: "Silence one incident for a while (30m, 24h, 7d): a rise in severity still pages",
		Long: `Silence incident INCIDENT for DURATION: a silence that matches that incident
only (incident=ID, host=HOST), up to the highest severity it has now, so
that a rise still pages. zwatch silence list shows it, with who made it
and why; zwatch silence expire ends it early.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := config.ParseDuration(args[1])
			if err != nil || d <= 0 || d > 365*24*time.Hour {
				return withCode(exitUsage, fmt.Errorf("snooze for %q: want a duration above 0 and at most 365d, such as 30m, 24h or 7d", args[1]))
			}
			return answerIncident(cmd, g, args[0], facts.IncidentActionData{Action: facts.ActionSnooze, Comment: strings.TrimSpace(comment)}, d)
		},
	}
	cmd.Flags().StringVar(&comment, "comment", "", "why (default: \"snoozed by WHO\")")
	return cmd
}

// answerIncident sends answer about incident id to the host whose incident
// it is (incident.Answer); a snooze lasts snoozeFor.
func answerIncident(cmd *cobra.Command, g *globals, id string, answer facts.IncidentActionData, snoozeFor ...time.Duration) error {
	id = strings.ToLower(strings.TrimSpace(id))
	if !incident.ValidID(id) {
		return withCode(exitUsage, fmt.Errorf("%q is not an incident ID: eight hex digits such as 3f2a9c1e (zwatch alerts lists them)", id))
	}
	answer.Incident, answer.By, answer.Source = id, whoAmI(), "cli"
	if len(answer.Comment) > silence.MaxComment {
		return withCode(exitUsage, fmt.Errorf("--comment is %d bytes long: at most %d", len(answer.Comment), silence.MaxComment))
	}
	l, err := g.loadConfig()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 20*time.Second)
	defer cancel()
	b, err := openBusFor(ctx, &l.Config)
	if err != nil {
		return withCode(exitNoData, err)
	}
	defer b.Close()
	var d time.Duration
	if len(snoozeFor) > 0 {
		d = snoozeFor[0]
	}
	res, err := incident.Answer(ctx, b, answer, d)
	if errors.Is(err, incident.ErrNotFiring) {
		return withCode(exitNoData, fmt.Errorf("no incident %s fires now (it may have resolved): zwatch alerts lists the incidents", id))
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	switch answer.Action {
	case facts.ActionAck:
		fmt.Fprintf(out, "Incident %s on %s acknowledged by %s: its %d alert(s) are not repeated; a change for the worse pages again (zwatch unack %s takes it back).\n",
			id, res.Host, answer.By, len(res.Alerts), id)
	case facts.ActionUnack:
		fmt.Fprintf(out, "Incident %s on %s is no longer acknowledged: its page repeats again.\n", id, res.Host)
	case facts.ActionSnooze:
		fmt.Fprintf(out, "Incident %s on %s snoozed until %s by silence %s (zwatch silence expire %s ends it early).\n",
			id, res.Host, res.Silence.EndsAt.Local().Format("2006-01-02 15:04 MST"), res.Silence.ID, res.Silence.Short())
	}
	return nil
}
