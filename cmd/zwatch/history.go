package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/views/history"
)

func newHistoryCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Read the history zwatch keeps: disk SMART attributes, pool capacity and errors, scrubs and alerts",
	}
	cmd.AddCommand(newHistoryExportCmd(g))
	return cmd
}

func newHistoryExportCmd(g *globals) *cobra.Command {
	var host, from, to, format string
	var sources []string
	var events bool
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the history of a host's disks and pools, or its events, as CSV or JSON",
		Long: `Write what zwatch kept of a host to stdout: for each source (disk/SERIAL
or pool/NAME; all when no --source) its points from --from to --to, the
daily aggregates first, then the hourly ones, then the raw points of the
newest part; with --events, the scrubs, resilvers and alerts instead.

CSV has one row per point and series: host,source,time,period_s,series,
min,max,mean (period_s 0 is a raw point, 3600 an hour, 86400 a day).

The history is read from the running zwatch's bus (or, when none runs,
from its store), so run it as the user zwatch runs as (root).

  zwatch history export --source disk/WD-WX12345 --from 30d
  zwatch history export --from 2026-01-01T00:00:00Z --format json
  zwatch history export --events --from 400d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			o := history.ExportOptions{Sources: sources, Format: format, Events: events}
			var err error
			if o.From, err = parseWhen(from, now, "--from"); err != nil {
				return withCode(exitUsage, err)
			}
			if o.To, err = parseWhen(to, now, "--to"); err != nil {
				return withCode(exitUsage, err)
			}
			if format != history.FormatCSV && format != history.FormatJSON {
				return withCode(exitUsage, fmt.Errorf("--format %q: want csv or json", format))
			}
			for _, s := range sources {
				if _, _, err := history.SplitSource(s); err != nil {
					return withCode(exitUsage, fmt.Errorf("--source: %w", err))
				}
			}
			return exportHistory(cmd, g, host, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&host, "host", "", "the host whose history to write (default: this host's host:)")
	f.StringArrayVar(&sources, "source", nil, "disk/SERIAL or pool/NAME; repeat for several (default: every source of the host)")
	f.StringVar(&from, "from", "7d", "start: an RFC 3339 time, or how long ago (12h, 30d)")
	f.StringVar(&to, "to", "0s", "end: an RFC 3339 time, or how long ago")
	f.StringVar(&format, "format", history.FormatCSV, "csv or json")
	f.BoolVar(&events, "events", false, "write the scrubs, resilvers and alerts instead of the points")
	return cmd
}

func exportHistory(cmd *cobra.Command, g *globals, host string, o history.ExportOptions) error {
	l, err := g.loadConfig()
	if err != nil {
		return err
	}
	if !l.Config.History.Enabled {
		return withCode(exitUsage, fmt.Errorf("history.enabled is false in %s: zwatch keeps no history to export", l.Path))
	}
	o.Host = host
	if o.Host == "" {
		o.Host = l.Config.Host
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 60*time.Second)
	defer cancel()
	b, err := openBusFor(ctx, &l.Config)
	if err != nil {
		return withCode(exitNoData, err)
	}
	defer b.Close()
	s, err := history.Attach(ctx, b.JS, l.Config.History)
	if err != nil {
		return withCode(exitNoData, err)
	}
	if err := s.Export(ctx, cmd.OutOrStdout(), o); err != nil {
		return fmt.Errorf("history export of %s: %w", o.Host, err)
	}
	return nil
}

// parseWhen reads an RFC 3339 time or a duration before now.
func parseWhen(s string, now time.Time, flag string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := config.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time (2026-01-31T00:00:00Z) or how long ago (12h, 30d)", flag, s)
	}
	return now.Add(-d), nil
}
