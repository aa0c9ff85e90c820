package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/input"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
)

func newDisksCmd(g *globals) *cobra.Command {
	var input string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "disks",
		Short: "List every disk with its SMART health and pool membership (or read a saved smartctl -j output)",
		Long: `List every disk: by-id name, device, model, serial, size, temperature, SMART
health, pool/vdev membership and last self-test. Reading SMART needs root.

With --input FILE, parse a saved 'smartctl -j -a' output exactly as the live
collector would; --json prints the schema documented in docs/smart-schema.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if input != "" {
				rep, err := readSmartFile(input)
				if err != nil {
					return withCode(exitNoData, err)
				}
				if asJSON {
					return writeJSON(out, rep)
				}
				return smart.Render(out, rep)
			}
			rows, errs, err := liveDisks(cmd.Context(), g)
			if err != nil {
				return withCode(exitNoData, err)
			}
			if asJSON {
				return writeJSON(out, map[string]any{"disks": rows, "errors": errs})
			}
			renderDisks(out, rows)
			for _, e := range errs {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n  fix: %s\n", strutil.FirstNonEmpty(e.Target, e.Collector), e.Message, e.Fix)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&input, "input", "", "parse `FILE`, a saved 'smartctl -j -a' output, instead of reading the disks; - for stdin")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/smart-schema.md)")
	return cmd
}

func readSmartFile(path string) (*smart.Report, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	rep, err := smart.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s is not a smartctl JSON output zwatch can read: %w (save it with: smartctl -j -a /dev/sdX > FILE)", input.Name(path), err)
	}
	return rep, nil
}

// diskRow is one line of `zwatch disks`.
type diskRow struct {
	smart.Report
	Pool string `json:"pool,omitempty"`
	Vdev string `json:"vdev,omitempty"`
}

// liveDisks reads every disk once with the SMART collector's reader and
// joins its reports with the pools' vdev trees.
func liveDisks(ctx context.Context, g *globals) ([]diskRow, []facts.CollectorErrorData, error) {
	l, err := g.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	reading, err := collectors.NewSmartCollector(collectors.SmartConfigFrom(&l.Config), nil).Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	member := membership(ctx, l.Config.ZFS.Zpool, l.Config.ZFS.CommandTimeout.D())
	var rows []diskRow
	for _, d := range reading.Disks {
		rows = append(rows, diskRow{Report: *d.Report})
	}
	for i := range rows {
		if m, ok := member[rows[i].Serial]; ok && rows[i].Serial != "" {
			rows[i].Pool, rows[i].Vdev = m.Pool, m.Vdev
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Device < rows[j].Device })
	return rows, reading.Errors, nil
}

// membership maps disk serials to their pool and vdev from zpool status.
func membership(ctx context.Context, zpool string, timeout time.Duration) map[string]daemon.Member {
	sd, err := (&collectors.ZpoolStatus{Runner: execx.New(timeout), Zpool: zpool}).Read(ctx)
	if err != nil {
		return nil
	}
	ids, _ := disk.Discover("/")
	return daemon.DiskMembership(sd.Pools, disk.NewResolver("/", ids))
}

func renderDisks(w io.Writer, rows []diskRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no disks found (smartctl --scan-open found none; reading SMART needs root)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BY-ID\tDEVICE\tMODEL\tSERIAL\tSIZE\tTEMP\tHEALTH\tPOOL/VDEV\tLAST SELF-TEST")
	for _, r := range rows {
		temp := "-"
		if r.TemperatureC != nil {
			temp = fmt.Sprintf("%d°C", *r.TemperatureC)
		}
		health := "unknown"
		switch {
		case r.InStandby:
			health = "standby"
		case r.SmartPassed != nil && *r.SmartPassed:
			health = "PASSED"
		case r.SmartPassed != nil:
			health = "FAILED"
		}
		member := "-"
		if r.Pool != "" {
			member = r.Pool + "/" + r.Vdev
		}
		test := "-"
		if r.SelfTest != nil {
			test = r.SelfTest.Type + ": " + r.SelfTest.Status
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", strutil.FirstNonEmpty(filepath.Base(r.ByID), "-"), r.Device,
			strutil.FirstNonEmpty(r.Model, "-"), strutil.FirstNonEmpty(r.Serial, "-"), units.Decimal(r.SizeBytes), temp, health, member, test)
	}
	tw.Flush()
}

// writeJSON prints v indented, with <, > and & as themselves: the output is
// read by people and programs, never embedded in HTML.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
