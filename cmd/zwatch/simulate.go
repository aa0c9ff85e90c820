package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/tools/simulate"
)

func newSimulateCmd(g *globals) *cobra.Command {
	var speed float64
	var list, asJSON bool
	cmd := &cobra.Command{
		Use:   "simulate SCENARIO [--speed N]",
		Short: "Replay a recorded real disk or pool failure through zwatch and your channels, to see what a real one sends",
		Long: `Replay a recorded, real failure — a raidz2 disk pulled and replaced, a disk
going OFFLINE and resilvering, a disk's pending sectors growing — through
zwatch's real pipeline: collectors, bus, rules, outbox and the channels of
your config (--config). Your phone gets exactly what a real failure sends.

Nothing on this machine is touched: stand-in zpool, zfs and smartctl in a
temporary directory replay the recordings (the real tools are never run),
the state directory is temporary too (state_dir and --state-dir are not
used), and everything is removed afterwards. It works on a machine without
ZFS. The notifications name the host "` + simulate.HostPrefix + `<host>" so that you can tell
them from real ones.

The recorded timeline is compressed to a few seconds per step (about half a
minute in all); --speed 10 runs it ten times faster. Holds that wait out
wobbling readings (PoolCapacity 5m) are shortened to match.

  zwatch simulate --list [--json]
  zwatch simulate disk-replaced --config /etc/zwatch/zwatch.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if list {
				return listScenarios(out, asJSON)
			}
			if asJSON {
				return withCode(exitUsage, errors.New("--json goes with --list: a simulation prints what your channels get as it runs"))
			}
			if len(args) != 1 {
				return withCode(exitUsage, errors.New("name a scenario: zwatch simulate SCENARIO (zwatch simulate --list shows them)"))
			}
			if speed <= 0 {
				return withCode(exitUsage, fmt.Errorf("--speed must be above 0, got %g", speed))
			}
			sc, err := simulate.Lookup(args[0])
			if err != nil {
				return withCode(exitUsage, err)
			}
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			log := g.logger(&l.Config)
			if g.logLevel == "" {
				log = slog.New(quietHandler{h: log.Handler()})
			}
			for _, w := range l.Warnings {
				log.Warn(w)
			}
			fmt.Fprintf(out, "Config: %s\n", l.Path)
			if g.stateDir != "" {
				fmt.Fprintln(out, "--state-dir is not used: a simulation keeps its state in a temporary directory.")
			}
			res, err := simulate.Run(cmd.Context(), l.Config, sc, simulate.Options{
				Speed: speed, Daemon: runOptions(), Out: out, Log: log,
			})
			if errors.Is(err, context.Canceled) {
				return withCode(exitFailure, errors.New("simulation interrupted; its temporary files are removed"))
			}
			if err != nil {
				return withCode(exitFailure, err)
			}
			renderSimulation(out, l.Config.Notify.Console, len(l.Config.Notify.Channels), res)
			return nil
		},
	}
	cmd.Flags().Float64Var(&speed, "speed", 1, "compress the recorded timeline this many times more (10: ten times faster)")
	cmd.Flags().BoolVar(&list, "list", false, "list the scenarios, what they show and where their recordings come from")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --list: print JSON (docs/json.md)")
	return cmd
}

// scenarioInfo is one scenario of `zwatch simulate --list --json`.
type scenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Origin      string `json:"origin"`
	Steps       int    `json:"steps"`
}

func listScenarios(w io.Writer, asJSON bool) error {
	all, err := simulate.List()
	if err != nil {
		return err
	}
	if asJSON {
		list := struct {
			Scenarios []scenarioInfo `json:"scenarios"`
		}{Scenarios: []scenarioInfo{}}
		for _, s := range all {
			list.Scenarios = append(list.Scenarios, scenarioInfo{Name: s.Name, Description: s.Description, Origin: s.Origin, Steps: len(s.Steps)})
		}
		return writeJSON(w, list)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range all {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Description)
		fmt.Fprintf(tw, "\trecorded: %s\n", s.Origin)
	}
	return tw.Flush()
}

func renderSimulation(w io.Writer, console bool, channels int, res *simulate.Result) {
	fmt.Fprintf(w, "\nThe rule engine sent %d notification(s) as host %s:\n", len(res.Notifications), res.Host)
	for _, n := range res.Notifications {
		fmt.Fprintf(w, "  %-8s %s\n", n.Status, summaryOf(n))
	}
	switch {
	case channels == 0 && !console:
		fmt.Fprintln(w, "No channel is configured (notify.channels is empty and notify.console is off): nobody was told. Add a channel and try again.")
	case channels == 0:
		fmt.Fprintln(w, "Only the console channel is configured, so they went to the log above. Add a channel under notify.channels to get them on your phone.")
	default:
		fmt.Fprintf(w, "Each of your %d channel(s) got those at or above its min_severity (default warning).\n", channels)
	}
	if res.DeadLetters > 0 {
		fmt.Fprintf(w, "%d notification(s) could not be delivered: see the warnings above, and try the channels with `zwatch notify test`.\n", res.DeadLetters)
	}
	fmt.Fprintf(w, "Temporary files removed (%s).\n", res.WorkDir)
}

// quietHandler shows what a person running a simulation wants to see: the
// notifications (as the console channel writes them), their deliveries to
// the other channels, and anything that went wrong. --log-level shows all.
type quietHandler struct {
	h    slog.Handler
	part string // the "part" attribute of the logger, e.g. rules
}

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool { return q.h.Enabled(ctx, l) }

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	switch {
	case r.Level >= slog.LevelWarn,
		r.Message == "notification" && q.part != "rules", // the rule engine's line repeats the console's
		r.Message == "notification delivered":
		return q.h.Handle(ctx, r)
	}
	return nil
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	part := q.part
	for _, a := range as {
		if a.Key == "part" {
			part = a.Value.String()
		}
	}
	return quietHandler{q.h.WithAttrs(as), part}
}

func (q quietHandler) WithGroup(n string) slog.Handler { return quietHandler{q.h.WithGroup(n), q.part} }
