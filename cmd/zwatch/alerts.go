package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/rules"
)

func newAlertsCmd(g *globals) *cobra.Command {
	var asJSON, allHosts bool
	cmd := &cobra.Command{
		Use:   "alerts",
		Short: "Show alerts firing now, recent notifications, and notifications that could not be delivered",
		Long: `Show the alerts firing now, the notifications recently sent, and the
dead-lettered ones (no channel accepted them for notify.retry_for).

With the embedded bus this reads the snapshot the running daemon refreshes
every few seconds under the state directory (or the bus itself when the
daemon is stopped); with bus.url or bus.listen it reads the bus.

With --all-hosts it always reads the bus (run it on any server), and adds
how many alerts each host has.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			var r daemon.AlertsReport
			if allHosts {
				r, err = fleetAlerts(cmd.Context(), &l.Config)
			} else {
				r, err = alertsReport(cmd.Context(), g, l.Config.Bus.URL, l.Config.Bus.Listen, l.Config.StateDir)
			}
			if err != nil {
				return withCode(exitNoData, err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			if allHosts {
				renderHostCounts(cmd.OutOrStdout(), r.Active)
			}
			renderAlertsReport(cmd.OutOrStdout(), r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&allHosts, "all-hosts", false, "read every host's alerts from the bus, never the local snapshot (docs/fleet.md)")
	return cmd
}

func alertsReport(ctx context.Context, g *globals, url, listen, stateDir string) (daemon.AlertsReport, error) {
	if url == "" && listen == "" {
		r, err := daemon.ReadSnapshot(stateDir)
		if err == nil && time.Since(r.GeneratedAt) < time.Minute {
			return r, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return r, err
		}
		// No fresh snapshot: the daemon is not running; read its store.
	}
	l, err := g.loadConfig()
	if err != nil {
		return daemon.AlertsReport{}, err
	}
	o := daemon.BusOptions(&l.Config)
	if listen != "" && url == "" {
		if o, err = bus.LocalClient(o); err != nil {
			return daemon.AlertsReport{}, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, o, nil)
	if err != nil {
		return daemon.AlertsReport{}, fmt.Errorf("%w (is zwatch running with another state dir? try --state-dir)", err)
	}
	defer b.Close()
	return daemon.BuildAlertsReport(ctx, b, 50, nil)
}

// fleetAlerts reads every host's alerts from the bus: rules.Active loads the
// state of all hosts from the state bucket.
func fleetAlerts(ctx context.Context, c *config.Config) (daemon.AlertsReport, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	b, err := openBusFor(ctx, c)
	if err != nil {
		return daemon.AlertsReport{}, err
	}
	defer b.Close()
	return daemon.BuildAlertsReport(ctx, b, 50, nil)
}

func renderHostCounts(w io.Writer, active []alert.Alert) {
	count := map[string]int{}
	var hosts []string
	for _, a := range active {
		h := a.Labels["host"]
		if count[h] == 0 {
			hosts = append(hosts, h)
		}
		count[h]++
	}
	sort.Strings(hosts)
	fmt.Fprintf(w, "Hosts with alerts (%d):", len(hosts))
	for _, h := range hosts {
		fmt.Fprintf(w, " %s (%d)", h, count[h])
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

func renderAlertsReport(w io.Writer, r daemon.AlertsReport) {
	fmt.Fprintf(w, "Firing now (%d):\n", len(r.Active))
	if len(r.Active) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		rules.RenderAlerts(w, r.Active)
	}
	if len(r.Silences) > 0 {
		fmt.Fprintf(w, "\nSilences (%d):\n", len(r.Silences))
		for _, s := range r.Silences {
			fmt.Fprintf(w, "  %s %s %s, up to %s, until %s by %s: %s\n", s.Short(), s.State(r.GeneratedAt), s.Matchers, s.MaxSeverity,
				s.EndsAt.Local().Format("2006-01-02 15:04"), s.CreatedBy, oneLineText(s.Comment))
		}
	}
	fmt.Fprintf(w, "\nRecent notifications (%d):\n", len(r.Recent))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, n := range r.Recent {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", n.Created.Local().Format("2006-01-02 15:04:05"), n.Status, n.MaxSeverity(), summaryOf(n))
	}
	tw.Flush()
	if len(r.Recent) == 0 {
		fmt.Fprintln(w, "  none")
	}
	fmt.Fprintf(w, "\nUndelivered (dead-lettered) notifications (%d):\n", len(r.DeadLetters))
	for _, d := range r.DeadLetters {
		fmt.Fprintf(w, "  %s via %s (%s): %d attempts since %s; last error: %s\n", summaryOf(d.Notification), d.Channel, d.ChannelType,
			d.Attempts, d.QueuedAt.Local().Format("2006-01-02 15:04"), d.LastError)
	}
	if len(r.DeadLetters) == 0 {
		fmt.Fprintln(w, "  none")
	}
}

func summaryOf(n alert.Notification) string {
	return notifiers.Render(n).Summary
}

func newRulesCmd(g *globals) *cobra.Command {
	root := &cobra.Command{Use: "rules", Short: "Check alert rules against saved outputs"}
	var asJSON bool
	eval := &cobra.Command{
		Use:   "eval FILE...",
		Short: "Evaluate the rules on saved zpool status / zpool list -Hp / smartctl -j outputs and kernel logs, in order",
		Long: `Take each FILE — a saved 'zpool status' (text or -j), 'zpool list -Hp' or
'smartctl -j -a' output, or a kernel log ('dmesg', 'dmesg -T', 'journalctl -k',
'journalctl -k -o json', /var/log/kern.log or raw /dev/kmsg records) — as
successive observations from one host, in the order given, and print the
alerts firing and resolved after the last one. A kernel log is taken as just
written (its last line is now); its disks are named as the kernel names
them (sdb, ata3, usb 2-1), since the machine it came from is not here.
The config's rules section (thresholds, overrides) applies. JSON schema:
docs/alert-schema.md. Pasted 'zpool status' text is read as 'zwatch status
--input' reads it (log prefixes, markdown fences, a fragment from 'config:');
a pool whose input has no 'errors:' line keeps its data errors unknown.

Exit status: 0 the files were evaluated (whatever fired), 2 usage or config
error, 3 a FILE could not be read: empty, over 64 MiB, a directory or
device, or none of the outputs above.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			alerts, err := rules.Eval(args, l.Config.Rules)
			if err != nil {
				return withCode(exitNoData, err)
			}
			if asJSON {
				return rules.RenderAlertsJSON(cmd.OutOrStdout(), alerts)
			}
			if len(alerts) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no alerts")
				return nil
			}
			return rules.RenderAlerts(cmd.OutOrStdout(), alerts)
		},
	}
	eval.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/alert-schema.md)")
	root.AddCommand(eval)
	return root
}

func newNotifyCmd(g *globals) *cobra.Command {
	root := &cobra.Command{Use: "notify", Short: "Work with notification channels"}
	var channel string
	var asJSON bool
	test := &cobra.Command{
		Use:   "test",
		Short: "Send a realistic test alert (a simulated disk failure with its replacement guide) through each channel",
		Long: `Send a realistic test alert (a simulated disk failure with its replacement
guide) through each channel, directly (not through the outbox), and print
per channel whether it was delivered, or the service's error and the likely
fix. --json prints the same as one object (docs/json.md). Exit status 1
when a channel failed, 2 when none is configured.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			n := notifiers.SampleNotification(l.Config.Host)
			results := notifiers.TestWith(cmd.Context(), l.Config.Notify, channel, n, runOptions().Notify.Guide)
			out := cmd.OutOrStdout()
			rep := notifyTestReport(results)
			if asJSON {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			}
			if len(results) == 0 {
				return withCode(exitUsage, errors.New("no channels configured: add one under notify.channels (see configs/zwatch.example.yaml)"))
			}
			for _, r := range rep.Channels {
				switch {
				case asJSON:
				case r.Delivered:
					fmt.Fprintf(out, "%-20s %-9s delivered in %s\n", r.Channel, r.Type, (time.Duration(r.TookMS) * time.Millisecond).String())
				default:
					fmt.Fprintf(out, "%-20s %-9s FAILED: %s\n", r.Channel, r.Type, r.Error)
					if r.Fix != "" {
						fmt.Fprintf(out, "%-20s %-9s fix: %s\n", "", "", r.Fix)
					}
				}
			}
			if rep.Failed > 0 {
				return withCode(exitFailure, fmt.Errorf("%d of %d channels failed", rep.Failed, len(results)))
			}
			return nil
		},
	}
	test.Flags().StringVar(&channel, "channel", "", "only this channel (by name)")
	test.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/json.md)")
	root.AddCommand(test)
	return root
}

// notifyTest is `zwatch notify test --json`.
type notifyTest struct {
	Channels  []channelTest `json:"channels"`
	Delivered int           `json:"delivered"`
	Failed    int           `json:"failed"`
}

// channelTest is one channel's outcome: delivered, or the service's error
// (secrets redacted, as in the text form) and the likely fix.
type channelTest struct {
	Channel   string `json:"channel"`
	Type      string `json:"type"`
	Delivered bool   `json:"delivered"`
	TookMS    int64  `json:"took_ms"`
	Error     string `json:"error,omitempty"`
	Fix       string `json:"fix,omitempty"`
}

func notifyTestReport(results []notifiers.TestResult) notifyTest {
	rep := notifyTest{Channels: []channelTest{}}
	for _, r := range results {
		c := channelTest{Channel: r.Channel, Type: r.Type, Delivered: r.Delivered, TookMS: r.Took.Milliseconds()}
		if r.Delivered {
			rep.Delivered++
		} else {
			rep.Failed++
			c.Fix = r.Fix
			if r.Err != nil {
				c.Error = r.Err.Error()
			}
		}
		rep.Channels = append(rep.Channels, c)
	}
	return rep
}
