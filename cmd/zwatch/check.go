package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/tools/replace"
)

// checkOptions are the flags of `zwatch check`.
type checkOptions struct {
	inputs     []string
	fromDaemon bool
	timeout    string
	// now is the clock the rules judge by; zero means time.Now (tests fix it).
	now time.Time
	// live is where a live check reads from; zero means this machine.
	live liveSources
}

func newCheckCmd(g *globals) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check [--input FILE...] [--from-daemon] [-t SECONDS]",
		Short: "Run as a monitoring plugin (Nagios, Icinga, Zabbix, Checkmk): one status line with performance data, exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN",
		Long: `Judge this host's pools and disks once with zwatch's rules and say so as a
monitoring plugin does (Monitoring Plugins Development Guidelines):

  ZWATCH CRITICAL - pool vault is DEGRADED: ... | 'vault_capacity'=12%;80;90;0;100 ...

followed by one line per alert with its fix's first command. The exit status
is the state: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. The state is the worst
severity among the alerts (info is OK, with a note); pool states are named
first, then the rest, worst first.

Where it reads from:
  (default)        this host, with the collectors the daemon runs: the pools'
                   kstat, zpool status, zpool list, zfs list (datasets,
                   snapshots), zfs version and smartctl
  --input FILE...  saved outputs, read as 'zwatch rules eval' reads them
  --from-daemon    the alerts the running daemon has firing now (its snapshot
                   under state_dir, or the bus when bus.url or bus.listen is set)

The rules are the daemon's, with the config's thresholds and rules.disabled.
A reading is one moment, so a condition it shows is reported at once, as the
daemon reports it once it has held for the alert's 'for' (docs/monitoring-plugins.md).
The performance data are each pool's fullness, fragmentation, error counters
and scrub age, each vdev's error counters and each disk's temperature and
reallocated/pending sectors (or NVMe media errors), with the rules' levels.

-t/--timeout (seconds, or a duration such as 10s; default zfs.command_timeout)
bounds the whole check: a zpool that does not answer is UNKNOWN within it
(CRITICAL when the kernel says a pool is SUSPENDED), never a hang. Bad flags,
a bad config, an unreadable --input, or a daemon that does not answer are
UNKNOWN too. Nothing is written to stderr.`,
		Args: cobra.ArbitraryArgs, // FILEs after --input; anything else is told apart in runCheck
		RunE: func(cmd *cobra.Command, args []string) error {
			return reportCheck(cmd, runCheck(cmd.Context(), g, o, args))
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.inputs, "input", nil, "judge saved outputs instead of this host (zpool status, zpool list -Hp, zfs list, smartctl -j, kernel logs; as rules eval); repeat it or name more FILEs after it")
	f.BoolVar(&o.fromDaemon, "from-daemon", false, "report the alerts the running daemon has firing now")
	f.StringVarP(&o.timeout, "timeout", "t", "", "bound the whole check: seconds or a duration (default zfs.command_timeout)")
	// A bad flag is UNKNOWN on stdout, as the guidelines say, not usage text on stderr.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return reportCheck(c, unknown("%v (see zwatch check --help)", err))
	})
	return cmd
}

// reportCheck prints the result and exits with its state.
func reportCheck(cmd *cobra.Command, r pluginResult) error {
	if err := r.write(cmd.OutOrStdout()); err != nil {
		return withCode(int(stateUnknown), err)
	}
	if r.State == stateOK {
		return nil
	}
	return withCode(int(r.State), errReported)
}

// defaultCheckTimeout is the bound when neither -t nor zfs.command_timeout says.
const defaultCheckTimeout = 30 * time.Second

// parseCheckTimeout reads -t: whole seconds as plugins take them (-t 10),
// or a duration (10s, 1m30s).
func parseCheckTimeout(s string, fallback time.Duration) (time.Duration, error) {
	if s == "" {
		if fallback <= 0 {
			return defaultCheckTimeout, nil
		}
		return fallback, nil
	}
	d, err := time.ParseDuration(s)
	if n, nerr := strconv.Atoi(s); nerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("-t/--timeout %q: give seconds (10) or a duration (10s) above 0", s)
	}
	return d, nil
}

// runCheck decides the result. It returns within the timeout whatever the
// sources do: the work gets a deadline early enough for a killed command to
// be reaped (execx), and a watchdog answers UNKNOWN at the timeout should
// anything still not return.
func runCheck(ctx context.Context, g *globals, o checkOptions, args []string) pluginResult {
	start := g.started // the monitoring system's clock runs from the process's start
	if start.IsZero() {
		start = time.Now()
	}
	if len(args) > 0 && len(o.inputs) == 0 {
		return unknown("unexpected argument %q: name saved outputs with --input FILE... (see zwatch check --help)", args[0])
	}
	inputs := append(o.inputs, args...)
	if o.fromDaemon && len(inputs) > 0 {
		return unknown("--from-daemon and --input exclude each other: the daemon's alerts, or saved outputs")
	}
	l, err := g.loadConfig()
	if err != nil {
		return unknown("config: %v", err)
	}
	cfg := &l.Config
	limit, err := parseCheckTimeout(o.timeout, cfg.ZFS.CommandTimeout.D())
	if err != nil {
		return unknown("%v", err)
	}
	// The work stops a little before the limit: a command killed then is
	// reaped at once. One stuck in the kernel is not, and execx would wait
	// 2 s more for it: the watchdog answers for it at the limit instead.
	wctx, cancel := context.WithDeadline(ctx, start.Add(limit-min(time.Second, limit/4)))
	defer cancel() // also kills what still runs when the watchdog answered

	var step checkStep
	step.set("the check")
	done := make(chan pluginResult, 1)
	go func() {
		switch {
		case len(inputs) > 0:
			step.set("an --input FILE") // a FIFO no one writes to
			done <- checkInputs(inputs, cfg, o.clock())
		case o.fromDaemon:
			step.set("the zwatch daemon")
			done <- checkDaemon(wctx, cfg)
		default:
			done <- checkLive(wctx, cfg, o, &step, limit)
		}
	}()
	watchdog := time.NewTimer(time.Until(start.Add(limit - min(500*time.Millisecond, limit/6))))
	defer watchdog.Stop()
	select {
	case r := <-done:
		return r
	case <-watchdog.C:
		return unknown("%s did not answer within %s", step.get(), roundLimit(limit))
	case <-ctx.Done():
		return unknown("interrupted while waiting for %s", step.get())
	}
}

func (o checkOptions) clock() time.Time {
	if !o.now.IsZero() {
		return o.now
	}
	return time.Now().UTC().Truncate(time.Second)
}

// checkStep is what the check waits on, for the watchdog to name.
type checkStep struct {
	mu   sync.Mutex
	what string
}

func (s *checkStep) set(what string) { s.mu.Lock(); s.what = what; s.mu.Unlock() }
func (s *checkStep) get() string     { s.mu.Lock(); defer s.mu.Unlock(); return s.what }

// roundLimit prints a time limit as people set it: 10s, 1.5s.
func roundLimit(d time.Duration) time.Duration {
	if d >= 2*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// checkInputs judges saved outputs, as `zwatch rules eval` does.
func checkInputs(files []string, cfg *config.Config, now time.Time) pluginResult {
	ev, err := rules.EvalFilesAt(files, cfg.Rules, now)
	if err != nil {
		return unknown("%v", err)
	}
	f, err := readFacts(ev.Facts)
	if err != nil {
		return unknown("%v", err)
	}
	return verdict(ev.Alerts, f, cfg, now, healthText(f), nil)
}

// verdict turns the alerts of an evaluation into the plugin's answer;
// healthy is its text when no alert is worse than info.
func verdict(alerts []alert.Alert, f checkFacts, cfg *config.Config, now time.Time, healthy string, notes []string) pluginResult {
	firing := firingForCheck(alerts)
	r := pluginResult{State: stateOK, Perf: perfData(f, &cfg.Rules, now)}
	var problems, info []string
	for _, a := range firing {
		switch a.Severity {
		case alert.Critical:
			r.State = stateCritical
		case alert.Warning:
			r.State = max(r.State, stateWarning)
		}
		if a.Severity == alert.Info {
			info = append(info, a.Summary)
		} else {
			problems = append(problems, a.Summary)
		}
	}
	if len(problems) > 0 {
		r.Text = joinSome(problems, 2)
	} else {
		r.Text = healthy
		if len(info) > 0 {
			r.Text += "; note: " + joinSome(info, 2)
		}
	}
	r.Long = alertLines(firing)
	r.Long = append(r.Long, notes...)
	return r
}

// firingForCheck keeps the firing alerts, pool states first, then the rest
// worst first in catalogue order (pool, vdev, capacity, scrub, disk, ...).
func firingForCheck(alerts []alert.Alert) []alert.Alert {
	var out []alert.Alert
	for _, a := range alerts {
		if a.State == alert.Firing {
			out = append(out, a)
		}
	}
	order := rules.Names()
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if pa, pb := rules.IsPoolStateAlert(a.Name), rules.IsPoolStateAlert(b.Name); pa != pb {
			return pa
		}
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if ia, ib := slices.Index(order, a.Name), slices.Index(order, b.Name); ia != ib {
			return ia < ib
		}
		return a.Summary < b.Summary
	})
	return out
}

// joinSome joins up to n items for the status line, which a pager cuts short.
func joinSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s (+%d more)", strings.Join(items[:n], "; "), len(items)-n)
}

// healthText says what was checked and found well.
func healthText(f checkFacts) string {
	var parts []string
	if f.status != nil {
		var states []string
		online := 0
		for _, p := range f.status.Pools {
			states = append(states, p.Name+" "+p.State)
			if p.State == zfs.StateOnline {
				online++
			}
		}
		switch {
		case len(f.status.Pools) == 0:
			parts = append(parts, "no pools imported")
		case online == len(f.status.Pools):
			names := make([]string, 0, len(f.status.Pools))
			for _, p := range f.status.Pools {
				names = append(names, p.Name)
			}
			parts = append(parts, fmt.Sprintf("%s ONLINE (%s)", plural(online, "pool"), strings.Join(names, ", ")))
		default:
			parts = append(parts, "pools "+strings.Join(states, ", "))
		}
	}
	if len(f.disks) > 0 {
		parts = append(parts, plural(len(f.disks), "disk")+" checked")
	}
	parts = append(parts, "no alerts")
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// alertLines is the long output: one line per alert with the first
// command of its fix.
func alertLines(firing []alert.Alert) []string {
	opts := guideOptions()
	var out []string
	for _, a := range firing {
		line := fmt.Sprintf("%s: %s [%s]", strings.ToUpper(string(a.Severity)), a.Summary, a.Name)
		if cmd := fixCommand(a, opts); cmd != "" {
			line += " - fix: " + cmd
		}
		out = append(out, line)
	}
	return out
}

// codeSpan is a command quoted in an alert's description.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// fixCommand is the first command of an alert's fix: for a disk to
// replace, `zwatch replace POOL OLD` from its replacement guide (it checks
// the new disk and runs zpool replace), else the guide's first command,
// else the first one the description quotes. A command with a pipe is
// passed over: plugin output cannot hold a "|" (it starts the performance
// data), and a command with it changed would not run as shown.
func fixCommand(a alert.Alert, opts replace.GuideOptions) string {
	var cmds []string
	for _, s := range replace.GuideSteps(a, opts) {
		for _, c := range append([]string{s.Command}, s.More...) {
			if strings.HasPrefix(c, "zwatch replace ") {
				return c
			}
			cmds = append(cmds, c)
		}
	}
	for _, m := range codeSpan.FindAllStringSubmatch(a.Description, -1) {
		if strings.Contains(m[1], " ") { // a command with its arguments, not a config key
			cmds = append(cmds, m[1])
		}
	}
	for _, c := range cmds {
		if c != "" && !strings.Contains(c, "|") {
			return c
		}
	}
	return ""
}

// errReported: the command has said everything on stdout already (the
// plugin output of `check`); only its exit status is left.
var errReported = errors.New("reported on stdout")
