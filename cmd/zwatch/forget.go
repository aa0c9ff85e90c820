package main

import (
	"context"
	"fmt"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/facts"
)

func newForgetPoolCmd(g *globals) *cobra.Command {
	var host string
	cmd := &cobra.Command{
		Use:   "forget-pool NAME",
		Short: "Say a pool that is no longer imported is gone for good, so its alerts end",
		Long: `Say that pool NAME, which zwatch has seen before and now reports as
PoolMissing, is gone for good (destroyed, its disks wiped or sold). Its
PoolMissing alert resolves, and so do the alerts it kept while it was not
imported: a pool's disappearance alone never resolves them, as an exported
DEGRADED pool is not a repaired one.

A pool that is exported on purpose and comes back now and then (a backup
pool rotated off-site) belongs under rules.pools.exported instead.

The request goes to the running zwatch (or, when none runs, waits in its
store for the next start). It needs the bus credentials in the state
directory, so only the user zwatch runs as (root) can send it. With
--host it forgets the pool of another host of the fleet (run it on the
server).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pool := args[0]
			if err := validPoolName(pool); err != nil {
				return withCode(exitUsage, err)
			}
			host, err := publishForget(cmd, g, host, facts.PoolForget, "forget-pool", facts.PoolForgetData{Pool: pool, By: whoAmI()})
			if err != nil {
				return fmt.Errorf("forget pool %s: %w", pool, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "zwatch forgets pool %s on %s: its PoolMissing alert and the alerts it kept resolve (see zwatch alerts).\n", pool, host)
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "the host whose pool it is (default: this host's host:)")
	return cmd
}

// publishForget sends a forget fact of kind as collector for host (this
// host's when ""), through the running daemon's bus or, with none running,
// the store itself; it returns the host it was sent for.
func publishForget[T any](cmd *cobra.Command, g *globals, host string, kind facts.KindOf[T], collector string, data T) (string, error) {
	l, err := g.loadConfig()
	if err != nil {
		return "", err
	}
	if host == "" {
		host = l.Config.Host
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 20*time.Second)
	defer cancel()
	b, err := openBusFor(ctx, &l.Config)
	if err != nil {
		return "", withCode(exitNoData, err)
	}
	defer b.Close()
	pub := &collectors.BusPublisher{Bus: b, Host: host}
	return host, collectors.Publish(ctx, pub, kind, collector, data)
}

// validPoolName applies OpenZFS's pool name rules (zfs_namecheck.c
// pool_namecheck) closely enough to refuse what cannot be a pool: a
// dataset or snapshot name, or text pasted around the name.
func validPoolName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("pool name is empty: give the name zwatch's PoolMissing alert shows")
	case len(name) > 255:
		return fmt.Errorf("pool name %.20q...: longer than 255 characters", name)
	case strings.ContainsAny(name, "/@#"):
		return fmt.Errorf("%q is a dataset, snapshot or bookmark name: give the pool's name alone (the part before the first /)", name)
	case !(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z'):
		return fmt.Errorf("pool name %q must begin with a letter", name)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.: ", r)
		if !ok {
			return fmt.Errorf("pool name %q holds %q, which pool names cannot", name, r)
		}
	}
	return nil
}

// whoAmI names the person asking, for the alert's record.
func whoAmI() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.Username
}
