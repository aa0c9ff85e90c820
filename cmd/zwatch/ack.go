package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
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
// it is, after checking that it fires; a snooze (for snoozeFor) first makes
// its silence.
func answerIncident(cmd *cobra.Command, g *globals, id string, answer facts.IncidentActionData, snoozeFor ...time.Duration) error {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) != 8 || strings.Trim(id, "0123456789abcdef") != "" {
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
	cur, err := rules.ReadCurrent(ctx, b)
	if err != nil {
		return withCode(exitNoData, err)
	}
	var members []alert.Alert
	for _, a := range cur.Active() {
		if a.Incident == id && a.State == alert.Firing {
			members = append(members, a)
		}
	}
	if len(members) == 0 {
		return withCode(exitNoData, fmt.Errorf("no incident %s fires now (it may have resolved): zwatch alerts lists the incidents", id))
	}
	host := members[0].Labels["host"]
	out := cmd.OutOrStdout()
	var short string
	if answer.Action == facts.ActionSnooze {
		s, err := snoozeSilence(ctx, b, id, host, members, answer, snoozeFor[0])
		if err != nil {
			return err
		}
		answer.Silence, answer.Until, short = s.ID, &s.EndsAt, s.Short()
	}
	pub := &collectors.BusPublisher{Bus: b, Host: host}
	if err := collectors.Publish(ctx, pub, facts.IncidentAction, "cli", answer); err != nil {
		return fmt.Errorf("send the answer to incident %s: %w", id, err)
	}
	switch answer.Action {
	case facts.ActionAck:
		fmt.Fprintf(out, "Incident %s on %s acknowledged by %s: its %d alert(s) are not repeated; a change for the worse pages again (zwatch unack %s takes it back).\n",
			id, host, answer.By, len(members), id)
	case facts.ActionUnack:
		fmt.Fprintf(out, "Incident %s on %s is no longer acknowledged: its page repeats again.\n", id, host)
	case facts.ActionSnooze:
		fmt.Fprintf(out, "Incident %s on %s snoozed until %s by silence %s (zwatch silence expire %s ends it early).\n",
			id, host, answer.Until.Local().Format("2006-01-02 15:04 MST"), answer.Silence, short)
	}
	return nil
}

// snoozeSilence makes the silence of a snooze: incident id on host, up to
// the worst severity of its alerts now.
func snoozeSilence(ctx context.Context, b *bus.Bus, id, host string, members []alert.Alert, answer facts.IncidentActionData, d time.Duration) (silence.Silence, error) {
	ms, err := silence.ParseMatchers([]string{"incident=" + id, "host=" + host})
	if err != nil {
		return silence.Silence{}, err
	}
	now := time.Now().UTC().Truncate(time.Second)
	comment := answer.Comment
	if comment == "" {
		comment = "snoozed by " + answer.By
	}
	s := silence.Silence{Matchers: ms, CreatedBy: answer.By, Comment: comment, StartsAt: now, UpdatedAt: now, EndsAt: now.Add(d), MaxSeverity: alert.Info}
	for _, a := range members {
		if a.Severity.Rank() > s.MaxSeverity.Rank() {
			s.MaxSeverity = a.Severity
		}
	}
	if s.ID, err = silence.NewID(); err != nil {
		return s, err
	}
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return s, withCode(exitNoData, fmt.Errorf("open the state bucket %s: %w (an agent's credentials cannot snooze: run this on a server)", bus.StateBucket, err))
	}
	if err := silence.Create(ctx, kv, &s); err != nil {
		return s, errors.Join(fmt.Errorf("snooze incident %s", id), err)
	}
	return s, nil
}
