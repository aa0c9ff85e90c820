package main

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
)

// snapshotFresh: the daemon rewrites its alerts snapshot every 5 s, so one
// older than this was left by a daemon that stopped or is stuck.
const snapshotFresh = time.Minute

// checkDaemon reports the alerts the running daemon has firing now, from
// where `zwatch alerts` reads them: its snapshot under state_dir with the
// embedded bus, the bus itself with bus.url or bus.listen. It never opens
// the store itself: a daemon that does not answer is UNKNOWN.
func checkDaemon(ctx context.Context, cfg *config.Config) pluginResult {
	if cfg.Bus.URL == "" && cfg.Bus.Listen == "" {
		return daemonSnapshot(cfg)
	}
	return daemonBus(ctx, cfg)
}

func daemonSnapshot(cfg *config.Config) pluginResult {
	path := filepath.Join(cfg.StateDir, daemon.SnapshotFile)
	r, err := daemon.ReadSnapshot(cfg.StateDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return unknown("no zwatch daemon: %s does not exist; is zwatch run running with state_dir %s? (--state-dir, or the config's state_dir)", path, cfg.StateDir)
	case errors.Is(err, fs.ErrPermission):
		return unknown("%v: run the check as root (sudo), or let its user read %s", err, path)
	case err != nil:
		return unknown("the daemon's alerts: %v", err)
	}
	age := time.Since(r.GeneratedAt)
	if age > snapshotFresh || age < -snapshotFresh {
		return unknown("the daemon's alerts snapshot %s is %s old: zwatch run is not running, or is stuck (it rewrites it every 5s)", path, age.Truncate(time.Second))
	}
	res := daemonVerdict(r.Active, cfg.Host)
	res.Perf = append(res.Perf, perfDatum{Label: "snapshot_age", Value: age.Truncate(time.Second).Seconds(), UOM: "s",
		Crit: num(snapshotFresh.Seconds()), Min: num(0)})
	return res
}

func daemonBus(ctx context.Context, cfg *config.Config) pluginResult {
	o := daemon.BusOptions(cfg)
	o.Name = "zwatch-check@" + cfg.Host
	o.NoStreams = true // a check reads; the streams are the daemon's to make
	if cfg.Bus.URL == "" {
		lo, err := bus.LocalClient(o)
		if err != nil {
			return unknown("no zwatch daemon answers: %v", err)
		}
		o = lo
	}
	b, err := bus.Open(ctx, o, nil)
	if err != nil {
		msg := err.Error()
		if o.URL != "" {
			msg = strings.ReplaceAll(msg, o.URL, redactURLs(o.URL))
		}
		return unknown("no zwatch daemon answers on the bus: %s", msg)
	}
	defer b.Close()
	// The client keeps retrying a server that refuses it: wait for it only
	// as long as the check may.
	for !b.NC.IsConnected() {
		select {
		case <-ctx.Done():
			return unknown("no zwatch daemon answers on the bus: no NATS server at %s answered in time", redactURLs(o.URL))
		case <-time.After(50 * time.Millisecond):
		}
	}
	active, err := rules.Active(ctx, b)
	if err != nil {
		return unknown("the daemon's alerts: %v", err)
	}
	// The alerts are as fresh as the daemon that keeps them: this host's
	// heartbeat says it still runs.
	hosts, err := fleet.Fleet(ctx, b.JS)
	if err != nil {
		return unknown("the daemon's heartbeat: %v", err)
	}
	silent := rules.SilentAfter(&cfg.Rules)
	age := time.Duration(-1)
	for _, h := range hosts {
		if h.Host == cfg.Host {
			age = h.Age(time.Now())
		}
	}
	switch {
	case age < 0:
		return unknown("zwatch on %s has sent no heartbeat to the bus: is zwatch run running there with host %q?", cfg.Host, cfg.Host)
	case age > silent:
		return unknown("zwatch on %s has sent no heartbeat for %s (rules.watcher.silent_after %s): zwatch run is not running, or is stuck", cfg.Host, age.Truncate(time.Second), silent)
	}
	res := daemonVerdict(active, cfg.Host)
	res.Perf = append(res.Perf, perfDatum{Label: "heartbeat_age", Value: age.Truncate(time.Second).Seconds(), UOM: "s",
		Crit: num(silent.Seconds()), Min: num(0)})
	return res
}

// daemonVerdict is the answer from the daemon's alerts, with their count
// per severity as performance data (a critical alert is CRITICAL: the
// range 0 alerts above none). A server's daemon judges its agents too: an
// alert about another host than this one says which.
func daemonVerdict(active []alert.Alert, host string) pluginResult {
	active = slices.Clone(active)
	for i := range active {
		if h := active[i].Labels["host"]; h != "" && h != host && !strings.HasPrefix(active[i].Summary, h+":") {
			active[i].Summary = h + ": " + active[i].Summary
		}
	}
	r := verdict(active, checkFacts{}, &config.Config{}, time.Now(), "no alerts firing", nil)
	count := map[alert.Severity]int{}
	for _, a := range firingForCheck(active) {
		count[a.Severity]++
	}
	r.Perf = []perfDatum{
		{Label: "alerts_critical", Value: float64(count[alert.Critical]), Crit: num(0), Min: num(0)},
		{Label: "alerts_warning", Value: float64(count[alert.Warning]), Warn: num(0), Min: num(0)},
		{Label: "alerts_info", Value: float64(count[alert.Info]), Min: num(0)},
	}
	return r
}

// redactURLs writes a bus.url (one URL or several, comma-separated) with
// what it holds before the host masked: a user and password, or a token.
func redactURLs(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil {
			parts[i] = "(an unreadable URL)"
			continue
		}
		if u.User != nil {
			u.User = url.User("xxxxx")
		}
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}
