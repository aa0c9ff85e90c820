// Package daemon wires zwatch together for `zwatch run`: the bus, the
// collectors that run on this machine, the rule engine, the notifiers, the
// heartbeat and systemd's watchdog.
package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/views/history"
)

// Version is set at build time (-ldflags "-X github.com/zwatch/zwatch/daemon.Version=...").
var Version = "dev"

// BuildDate is when the binary was built, set like Version by `make build`
// (RFC 3339, UTC); "" when not set.
var BuildDate = ""

// Component is one long-running part of the daemon. It returns when ctx
// ends; an error before that makes the supervisor restart it.
type Component struct {
	Name string
	Run  func(ctx context.Context) error
}

// BusOptions maps the config onto bus options.
func BusOptions(c *config.Config) bus.Options {
	return bus.Options{
		StateDir:        c.StateDir,
		Listen:          c.Bus.Listen,
		ListenTLSCert:   c.Bus.ListenTLS.Cert,
		ListenTLSKey:    c.Bus.ListenTLS.Key,
		URL:             c.Bus.URL,
		CredsFile:       c.Bus.CredsFile,
		User:            c.Bus.User,
		Password:        c.Bus.Password.Value,
		TLSCA:           c.Bus.TLS.CA,
		TLSCert:         c.Bus.TLS.Cert,
		TLSKey:          c.Bus.TLS.Key,
		Replicas:        c.Bus.Replicas,
		FactsMaxAge:     c.Bus.FactsMaxAge.D(),
		FactsMaxBytes:   int64(c.Bus.FactsMaxMB) << 20,
		Name:            "zwatch@" + c.Host,
		FactSubjects:    facts.StreamSubjects(),
		HistoryMaxBytes: historyBytes(c),
		Partitions:      partitions(c),
	}
}

// partitions is the facts stream's partition count a process asks for:
// fleet.partitions for a server on a NATS cluster; 0 (whatever the stream
// has) for an agent, which creates no streams, and on one machine, whose
// embedded bus has one engine.
func partitions(c *config.Config) int {
	if c.Role != config.RoleServer || c.Bus.URL == "" {
		return 0
	}
	return c.Fleet.Partitions
}

// historyBytes is what the history's streams may hold together (0: off,
// or an agent, which keeps none).
func historyBytes(c *config.Config) int64 {
	if !c.History.Enabled || c.Role == config.RoleAgent {
		return 0
	}
	return history.StreamCount * int64(c.History.MaxMB) << 20
}

// supervise runs every component, restarting one that fails with a backoff
// (1 s doubling to 1 min) so that a passing fault never kills monitoring.
// It returns when ctx ends and every component has returned.
func supervise(ctx context.Context, comps []Component, log *slog.Logger) {
	var wg sync.WaitGroup
	for _, c := range comps {
		wg.Add(1)
		go func(c Component) {
			defer wg.Done()
			backoff := time.Second
			for {
				start := time.Now()
				err := c.Run(ctx)
				if ctx.Err() != nil {
					return
				}
				if err == nil {
					err = fmt.Errorf("returned without error")
				}
				if time.Since(start) > 5*time.Minute {
					backoff = time.Second
				}
				log.Error("component stopped; restarting", "component", c.Name, "err", err, "in", backoff)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(backoff*2, time.Minute)
			}
		}(c)
	}
	wg.Wait()
}
