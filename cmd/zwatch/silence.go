package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/silence"
)

const silenceLong = `A silence keeps the alerts it matches from paging for a while, in the
manner of Alertmanager's: the disk that is failing while the new one is in
the post, the pool being rebuilt this weekend. A silenced alert still
fires (zwatch alerts and the status page show it, marked silenced), but is
not sent; a rise above the severity the silence covers is sent all the
same, unless it was made with --any-severity. An alert whose page a
silence held back gets no resolved notice either; one paged before the
silence does. When the silence ends by itself, one info notice says so
and what still fires pages again as usual.

Matchers are Alertmanager's: NAME=VALUE, NAME!=VALUE, NAME=~REGEX,
NAME!~REGEX (RE2, matching the whole value); every matcher must hold. The
labels are the alerts' own (alertname, host, pool, vdev, disk, dataset,
collector, …; zwatch alerts --json shows them) plus severity, and pool and
serial for a disk alert of a disk in a pool. A silence matches the alerts
of every host it names, or of every host when it names none.

Silences live in the bus's state bucket: every server of a fleet and every
restart sees them. Changing them needs the bus credentials in the state
directory, so only the user zwatch runs as (root) can; on an agent, run
it on a server.`

func newSilenceCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "silence",
		Short: "Keep alerts you know about from paging for a while (add, list, expire)",
		Long:  silenceLong,
	}
	root.AddCommand(newSilenceAddCmd(g), newSilenceListCmd(g), newSilenceExpireCmd(g))
	return root
}

// silenceAdd is what `zwatch silence add` was asked.
type silenceAdd struct {
	dur, until, start, comment, author, maxSeverity string
	anySeverity                                     bool
}

func newSilenceAddCmd(g *globals) *cobra.Command {
	var o silenceAdd
	cmd := &cobra.Command{
		Use:   "add MATCHER...",
		Short: "Silence the alerts the matchers select; prints the new silence's ID",
		Long: `Silence the alerts every MATCHER selects, from now (or --start) for --for
(default 1h) or until --until, and print the silence's ID.

  zwatch silence add pool=tank vdev=sdb --for 7d --comment "waiting for the new disk"
  zwatch silence add 'alertname=~"Scrub.*"' host=nas2 --for 2d --comment "scrub moved to Sunday"
  zwatch silence add DiskIncident disk=WD-WX32D70 --for 12h --comment "cable swapped" --any-severity

A first argument without an operator is the alert name (alertname=...).
The silence covers up to the highest severity among the alerts it matches
now (warning when none fires): a rise above it pages. --max-severity sets
that bound, --any-severity silences every severity. What a silence does:
zwatch silence --help.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runSilenceAdd(cmd, g, args, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dur, "for", "1h", "how long it lasts from its start: 30m, 12h, 7d")
	f.StringVar(&o.until, "until", "", "when it ends instead of --for, RFC 3339 (2026-05-01T08:00:00Z)")
	f.StringVar(&o.start, "start", "", "when it starts, RFC 3339 (default now); until then it is pending")
	f.StringVar(&o.comment, "comment", "", "why (required): what the person who finds it later should know")
	f.StringVar(&o.author, "author", whoAmI(), "who makes it")
	f.StringVar(&o.maxSeverity, "max-severity", "", "the highest severity it silences: info, warning or critical (default: see above)")
	f.BoolVar(&o.anySeverity, "any-severity", false, "silence every severity: a rise to critical does not page either")
	return cmd
}

func runSilenceAdd(cmd *cobra.Command, g *globals, args []string, o silenceAdd) error {
	ms, err := silence.ParseMatchers(args)
	if err != nil {
		return withCode(exitUsage, err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	s := silence.Silence{Matchers: ms, CreatedBy: strings.TrimSpace(o.author), Comment: strings.TrimSpace(o.comment), StartsAt: now, UpdatedAt: now}
	if err := o.times(cmd, &s, now); err != nil {
		return withCode(exitUsage, err)
	}
	switch {
	case s.Comment == "":
		return withCode(exitUsage, errors.New(`--comment is required: say why, e.g. --comment "waiting for the new disk", so whoever finds the silence later knows`))
	case len(s.Comment) > silence.MaxComment:
		return withCode(exitUsage, fmt.Errorf("--comment is %d bytes long: at most %d", len(s.Comment), silence.MaxComment))
	case s.CreatedBy == "":
		return withCode(exitUsage, errors.New("--author is empty: say who makes the silence"))
	case o.anySeverity && o.maxSeverity != "":
		return withCode(exitUsage, errors.New("--any-severity and --max-severity say the same thing twice: give one"))
	}
	if o.maxSeverity != "" {
		sev, ok := alert.ParseSeverity(o.maxSeverity)
		if !ok {
			return withCode(exitUsage, fmt.Errorf("--max-severity %q: want info, warning or critical", o.maxSeverity))
		}
		s.MaxSeverity = sev
	}
	if o.anySeverity {
		s.MaxSeverity = alert.Critical
	}
	if s.ID, err = silence.NewID(); err != nil {
		return err
	}
	return withSilences(cmd, g, func(ctx context.Context, kv jetstream.KeyValue, cur *rules.Current) error {
		matching := cur.Matching(ms)
		if s.MaxSeverity == "" {
			s.MaxSeverity = alert.Warning
			for _, a := range matching {
				if a.Severity.Rank() > s.MaxSeverity.Rank() {
					s.MaxSeverity = a.Severity
				}
			}
		}
		if n := len(cur.Silences(true)); n >= silence.MaxSilences {
			return fmt.Errorf("%d silences are kept already, at most %d: expire some (zwatch silence list)", n, silence.MaxSilences)
		}
		if err := silence.Create(ctx, kv, &s); err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), s.ID)
		w := cmd.ErrOrStderr()
		fmt.Fprintf(w, "%s: from %s until %s (%s), up to %s severity.\n", s.Describe(), s.StartsAt.Local().Format("2006-01-02 15:04"),
			s.EndsAt.Local().Format("2006-01-02 15:04 MST"), config.FormatDuration(s.EndsAt.Sub(s.StartsAt)), s.MaxSeverity)
		if len(matching) == 0 {
			fmt.Fprintln(w, "No alert fires now that it matches: it applies to those that start while it lasts.")
		} else {
			fmt.Fprintf(w, "It matches %d alert(s) firing now: %s.\n", len(matching), alertList(matching, 8))
		}
		return nil
	})
}

// times sets the silence's start and end from --start, --for and --until.
func (o silenceAdd) times(cmd *cobra.Command, s *silence.Silence, now time.Time) error {
	if o.start != "" {
		t, err := time.Parse(time.RFC3339, o.start)
		if err != nil {
			return fmt.Errorf("--start %q is not an RFC 3339 time such as 2026-05-01T08:00:00Z", o.start)
		}
		if t.After(now) {
			s.StartsAt = t.UTC()
		}
	}
	if o.until != "" {
		if cmd.Flags().Changed("for") {
			return errors.New("--for and --until both say when it ends: give one")
		}
		t, err := time.Parse(time.RFC3339, o.until)
		if err != nil {
			return fmt.Errorf("--until %q is not an RFC 3339 time such as 2026-05-01T08:00:00Z", o.until)
		}
		s.EndsAt = t.UTC()
	} else {
		d, err := config.ParseDuration(o.dur)
		if err != nil {
			return fmt.Errorf("--for: %w", err)
		}
		if d <= 0 || d > 10*365*24*time.Hour {
			return fmt.Errorf("--for %s: want a duration above 0 and at most 3650d", o.dur)
		}
		s.EndsAt = s.StartsAt.Add(d)
	}
	if !s.EndsAt.After(now) || !s.EndsAt.After(s.StartsAt) {
		return fmt.Errorf("the silence would end (%s) before it starts (%s) or in the past: check --until/--start", s.EndsAt.Format(time.RFC3339), s.StartsAt.Format(time.RFC3339))
	}
	return nil
}

func newSilenceExpireCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "expire ID...",
		Short: "End silences now (any unique start of an ID will do)",
		Long: `End each silence named by ID now: the alerts it held back page again at
once (a page never sent), or at their next repeat. Any unique start of an
ID (as zwatch silence list shows it) will do. A silence ended so sends no
expiry notice; expiring one that ended already is no error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSilences(cmd, g, func(ctx context.Context, kv jetstream.KeyValue, cur *rules.Current) error {
				for _, arg := range args {
					if err := expireOne(ctx, cmd, kv, cur, arg); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

func expireOne(ctx context.Context, cmd *cobra.Command, kv jetstream.KeyValue, cur *rules.Current, arg string) error {
	s, err := silence.Find(cur.Silences(true), arg)
	if err != nil {
		return withCode(exitUsage, err)
	}
	now := time.Now().UTC()
	was := s.State(now)
	// Freed alerts: those it muted before it ends.
	var freed []alert.Alert
	for _, a := range cur.Matching(s.Matchers) {
		if a.Silenced != nil && a.Silenced.ID == s.ID {
			freed = append(freed, a)
		}
	}
	for try := 0; ; try++ {
		s, err = silence.Expire(ctx, kv, s, whoAmI(), now)
		if !errors.Is(err, silence.ErrChanged) || try > 0 {
			break
		}
		if s, err = silence.Get(ctx, kv, s.ID); err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if was == silence.Expired {
		fmt.Fprintf(out, "%s had ended already (%s).\n", s.Describe(), s.EndsAt.Local().Format("2006-01-02 15:04 MST"))
		return nil
	}
	fmt.Fprintf(out, "%s expired.", s.Describe())
	if len(freed) > 0 {
		fmt.Fprintf(out, " Alerts that still fire page again: %s.", alertList(freed, 8))
	}
	fmt.Fprintln(out)
	return nil
}

// withSilences opens the bus as forget-pool does (the running daemon's, or
// the store itself), reads the alerts and silences, and runs fn.
func withSilences(cmd *cobra.Command, g *globals, fn func(context.Context, jetstream.KeyValue, *rules.Current) error) error {
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
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return withCode(exitNoData, fmt.Errorf("open the state bucket %s: %w (an agent's credentials cannot change silences: run this on a server)", bus.StateBucket, err))
	}
	cur, err := rules.ReadCurrent(ctx, b)
	if err != nil {
		return withCode(exitNoData, err)
	}
	return fn(ctx, kv, cur)
}

// alertList names alerts for one line: "VdevState on nas1 (pool=tank, vdev=sdb)", at most max.
func alertList(as []alert.Alert, max int) string {
	var parts []string
	for i, a := range as {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(as)-max))
			break
		}
		parts = append(parts, alertName(a))
	}
	return strings.Join(parts, ", ")
}

func alertName(a alert.Alert) string {
	var about []string
	for _, k := range []string{"pool", "vdev", "disk", "dataset", "collector"} {
		if v := a.Labels[k]; v != "" {
			about = append(about, k+"="+v)
		}
	}
	s := a.Name + " on " + a.Labels["host"]
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	return s
}
