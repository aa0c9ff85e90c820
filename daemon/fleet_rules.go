package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/rules/runner"
)

// leaseHolder names this process in the lease bucket.
func leaseHolder(cfg *config.Config) string { return fmt.Sprintf("%s/%d", cfg.Host, os.Getpid()) }

// fleetRules runs the rule engine of a server on a NATS cluster that
// other servers may share: the engines of this server's share of the
// partitions (fleet.Partitions), or, on a stream with one partition, one
// engine on one server at a time under fleet.RulesLease.
func fleetRules(b *bus.Bus, cfg *config.Config, ropts runner.Options, log *slog.Logger) func(context.Context) error {
	holder := leaseHolder(cfg)
	lease := log.With("part", "lease")
	return func(ctx context.Context) error {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		n, err := b.Partitions(pctx)
		cancel()
		if err != nil {
			return err // the supervisor tries again
		}
		run := func(ctx context.Context, o runner.Options) error {
			return runner.RunWith(ctx, b, rulesConfig(cfg), o, log.With("part", "rules"))
		}
		if n <= 1 {
			return fleet.Lead(ctx, b.JS, fleet.RulesLease, holder, cfg.Fleet.LeaseTTL.D(), cfg.Bus.Replicas, lease,
				func(ctx context.Context) error { return run(ctx, ropts) })
		}
		keys := &runner.StateKeys{} // one listing for the engines starting together
		ps := &fleet.Partitions{
			JS: b.JS, Count: n, Holder: holder, TTL: cfg.Fleet.LeaseTTL.D(), Replicas: cfg.Bus.Replicas, Log: lease,
			Run: func(ctx context.Context, p int) error {
				o := ropts
				o.Partition, o.StateKeys = &runner.Partition{Index: p, Count: n}, keys
				return run(ctx, o)
			},
			Drain: func(ctx context.Context) error {
				o := ropts
				o.DrainLegacy = true
				return run(ctx, o)
			},
			LegacyPending: func(ctx context.Context) (bool, error) { return runner.LegacyConsumerExists(ctx, b.JS) },
		}
		return ps.Lead(ctx)
	}
}
