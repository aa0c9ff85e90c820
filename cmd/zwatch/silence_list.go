package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/silence"
)

// listedSilence is one silence in `zwatch silence list --json`: the
// silence as stored, its state now, and the firing alerts it matches.
type listedSilence struct {
	silence.Silence
	State    silence.State  `json:"state"`
	Matching []matchedAlert `json:"matching"`
}

// matchedAlert is a firing alert a silence's matchers select. Silenced
// says whether this silence keeps it from being sent now: false while the
// silence is pending or expired, or when the alert's severity is above
// what the silence covers.
type matchedAlert struct {
	Name     string            `json:"name"`
	Host     string            `json:"host"`
	Severity alert.Severity    `json:"severity"`
	Summary  string            `json:"summary"`
	Labels   map[string]string `json:"labels"`
	Silenced bool              `json:"silenced"`
}

func newSilenceListCmd(g *globals) *cobra.Command {
	var asJSON, expired bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"query", "ls"},
		Short:   "List the silences, their state and the firing alerts each matches",
		Long: `List the silences that are pending or active (with --expired, also those
that ended in the last 5 days), oldest first: ID, state, matchers, the
highest severity each covers, when it ends, who made it and why, and the
firing alerts it matches (marked when the silence keeps them from being
sent). --json prints them as {"silences": [...]} (docs/silences.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSilences(cmd, g, func(_ context.Context, _ jetstream.KeyValue, cur *rules.Current) error {
				list := listSilences(cur, expired)
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), struct {
						Silences []listedSilence `json:"silences"`
					}{list})
				}
				renderSilences(cmd.OutOrStdout(), list, cur.Now())
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&expired, "expired", false, "also list the silences that ended, as long as they are kept (5 days)")
	return cmd
}

func listSilences(cur *rules.Current, expired bool) []listedSilence {
	out := []listedSilence{}
	for _, s := range cur.Silences(expired) {
		l := listedSilence{Silence: s, State: s.State(cur.Now()), Matching: []matchedAlert{}}
		for _, a := range cur.Matching(s.Matchers) {
			l.Matching = append(l.Matching, matchedAlert{
				Name: a.Name, Host: a.Labels["host"], Severity: a.Severity, Summary: a.Summary, Labels: a.Labels,
				Silenced: a.Silenced != nil && a.Silenced.ID == s.ID,
			})
		}
		out = append(out, l)
	}
	return out
}

func renderSilences(w io.Writer, list []listedSilence, now time.Time) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no silences")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tMATCHERS\tUP TO\tENDS\tBY\tCOMMENT")
	for _, l := range list {
		ends := l.EndsAt.Local().Format("2006-01-02 15:04")
		switch l.State {
		case silence.Pending:
			ends += " (starts " + l.StartsAt.Local().Format("2006-01-02 15:04") + ")"
		case silence.Active:
			ends += " (in " + roundDuration(l.EndsAt.Sub(now)) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.ID, l.State, l.Matchers, l.MaxSeverity, ends, l.CreatedBy, oneLineText(l.Comment))
	}
	tw.Flush()
	for _, l := range list {
		if len(l.Matching) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s matches %d firing alert(s):\n", l.Short(), len(l.Matching))
		for _, a := range l.Matching {
			mark := "silenced"
			switch {
			case l.State != silence.Active:
				mark = "sent (the silence is " + string(l.State) + ")"
			case !a.Silenced && a.Severity.Rank() > l.MaxSeverity.Rank():
				mark = "sent: " + string(a.Severity) + " is above what the silence covers"
			case !a.Silenced:
				mark = "silenced by another silence"
			}
			fmt.Fprintf(w, "  %-8s %s: %s [%s]\n", a.Severity, alertName(alert.Alert{Name: a.Name, Labels: a.Labels}), a.Summary, mark)
		}
	}
}

// roundDuration is a duration in the largest whole unit that says it: 6d, 5h, 12m.
func roundDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return "under a minute"
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
