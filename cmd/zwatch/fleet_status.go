package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/fleet"
)

func newFleetStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the rule engine's partitions, the server holding each, and the facts waiting for it",
		Long: `Show how the servers on the bus share the rule engine: the facts stream's
partition count (fleet.partitions), each running server with the partitions
it holds and the facts waiting for them, and one line per partition with its
owner, the facts not yet delivered to it (waiting) and those delivered but
not yet acknowledged (unacked: applied, their state not yet saved).

A partition without an owner is waiting for a server: its facts are kept
and applied once a server takes it (within fleet.lease_ttl of one starting
or having room). Exit status 0; 3 when the bus cannot be read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			b, err := openBusFor(ctx, &l.Config)
			if err != nil {
				return withCode(exitNoData, err)
			}
			defer b.Close()
			st, err := fleet.Status(ctx, b.JS)
			if err != nil {
				return withCode(exitNoData, err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), st)
			}
			return printEngineStatus(cmd.OutOrStdout(), st)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/json.md)")
	return cmd
}

func printEngineStatus(w io.Writer, st *fleet.EngineStatus) error {
	switch {
	case !st.Leases:
		fmt.Fprintln(w, "rule engine: one engine on this machine's embedded bus (no fleet servers)")
	case st.Partitions <= 1:
		fmt.Fprintln(w, "rule engine: one partition (one server evaluates every host; the others stand by)")
	default:
		fmt.Fprintf(w, "rule engine: %d partitions on %d servers", st.Partitions, len(st.Servers))
		if st.Unowned > 0 {
			fmt.Fprintf(w, ", %d without a server (their facts wait)", st.Unowned)
		}
		fmt.Fprintln(w)
	}
	if st.LegacyPending != nil {
		fmt.Fprintf(w, "upgrade: %d facts from before partitioning are still being applied; the partitions start after them\n", *st.LegacyPending)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSERVER\tPARTITIONS\tFACTS WAITING")
	for _, s := range st.Servers {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", s.Server, s.Partitions, s.Waiting)
	}
	fmt.Fprintln(tw, "\nPARTITION\tOWNER\tWAITING\tUNACKED")
	for _, r := range st.Table {
		owner := r.Owner
		if owner == "" {
			owner = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\n", r.Partition, owner, r.Waiting, r.Unacked)
	}
	return tw.Flush()
}
