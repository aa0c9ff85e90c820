package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/input"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules"
)

// statusReport is the --json output of `zwatch status`; its schema is
// documented in docs/status-schema.md.
type statusReport struct {
	Pools []*zfs.Pool `json:"pools"`
	// Datasets, live only: per pool, its datasets' and snapshots' problems.
	Datasets      []poolDatasets `json:"datasets,omitempty"`
	DatasetsError string         `json:"datasets_error,omitempty"`
}

func newStatusCmd(g *globals) *cobra.Command {
	var input string
	var asJSON, allHosts bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the health of this host's pools once (or of a saved `zpool status` output)",
		Long: `Show the health of this host's pools once, read the way the live collector reads them.

With --input FILE, read a saved 'zpool status' output (text, or 'zpool status -j'
JSON) instead of running zpool: for checking a friend's output, or a support case.
Pasted text is read too: lines from a log or a chat (a syslog, journalctl or
ISO-8601 timestamp, a "[12:00:01]" stamp or "<nick>" before every line),
markdown with ` + "```" + ` fences, CRLF line endings, tabs turned into spaces, and a
fragment that starts at 'config:' or at the NAME/STATE header (the pool is
then named after the first row of the table). When the input has no
'errors:' line the data errors are shown as unknown, never as none.

Exit status: 0 every pool ONLINE with no errors, 1 a problem was found (or
a pool's data errors are unknown), 2 usage or config error, 3 the pools could
not be read: zpool missing or hung, or an --input that is empty, over 64 MiB,
a directory or device, or not a 'zpool status' output (a smartctl report, a
dmesg, other text).

With --all-hosts, show every host on the bus instead (run it on a server):
the last heartbeat of each and its pools from its latest zpool status and
zpool list messages. Exit status 1 then means a host is silent for longer
than rules.watcher.silent_after, or a pool is not ONLINE or has errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if allHosts {
				return fleetStatus(cmd.Context(), g, cmd.OutOrStdout(), asJSON)
			}
			var pools []*zfs.Pool
			var err error
			var datasets *datasetsView
			if input != "" {
				pools, err = readStatusFile(input)
			} else {
				pools, datasets, err = liveStatus(cmd.Context(), g)
			}
			if err != nil {
				return withCode(exitNoData, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				r := statusReport{Pools: nonNil(pools)}
				if datasets != nil {
					r.Datasets = datasets.Pools
					if datasets.Err != nil {
						r.DatasetsError = datasets.Err.Error()
					}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				renderPools(out, pools, datasets)
			}
			problems := countProblems(pools)
			if datasets != nil {
				problems += datasets.problems()
			}
			if problems > 0 {
				return withCode(exitFailure, fmt.Errorf("%d problem(s) found", problems))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&input, "input", "", "read `FILE`, a saved 'zpool status' output (text or -j JSON), instead of running zpool; - for stdin")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the documented JSON form (docs/status-schema.md)")
	cmd.Flags().BoolVar(&allHosts, "all-hosts", false, "show every host on the bus: last heartbeat and pool states (docs/fleet.md)")
	return cmd
}

// openBusFor connects to the bus the config names for reading: bus.url, the
// embedded server's bus.listen, or the embedded store itself.
//
// With the embedded bus, a running daemon is reached on its listener (its
// loopback one without bus.listen); its store is opened directly only when
// no daemon runs, as two servers must never share one store.
func openBusFor(ctx context.Context, c *config.Config) (*bus.Bus, error) {
	o := daemon.BusOptions(c)
	o.Name = "zwatch-cli@" + c.Host
	o.Partitions = 0 // a reader never changes how the facts stream is split
	if o.URL != "" {
		return openBus(ctx, o)
	}
	lo, err := bus.LocalClient(o)
	switch {
	case err == nil:
		return openBus(ctx, lo)
	case o.Listen != "" || !errors.Is(err, bus.ErrNotRunning):
		return nil, err
	}
	// No daemon holds the store.
	return openBus(ctx, o)
}

func openBus(ctx context.Context, o bus.Options) (*bus.Bus, error) {
	b, err := bus.Open(ctx, o, nil)
	if err != nil {
		return nil, fmt.Errorf("%w (is zwatch running with another state dir? try --state-dir)", err)
	}
	return b, nil
}

// fleetStatus is `zwatch status --all-hosts`.
func fleetStatus(ctx context.Context, g *globals, w io.Writer, asJSON bool) error {
	l, err := g.loadConfig()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := openBusFor(ctx, &l.Config)
	if err != nil {
		return withCode(exitNoData, err)
	}
	defer b.Close()
	hosts, err := fleet.Fleet(ctx, b.JS)
	if err != nil {
		return withCode(exitNoData, err)
	}
	now := time.Now()
	silent := rules.SilentAfter(&l.Config.Rules)
	problems := 0
	for _, h := range hosts {
		if age := h.Age(now); age < 0 || age > silent {
			problems++
		}
		for _, p := range h.Pools {
			if p.State != "ONLINE" || p.Errors > 0 {
				problems++
			}
		}
	}
	if asJSON {
		if err := writeJSON(w, struct {
			GeneratedAt time.Time        `json:"generated_at"`
			Hosts       []fleet.HostView `json:"hosts"`
		}{now.UTC(), hosts}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tHEARTBEAT\tPOOL\tSTATE\tCAP\tERRORS\tBUFFER")
		for _, h := range hosts {
			hb := "never"
			if age := h.Age(now); age >= 0 {
				hb = age.Truncate(time.Second).String() + " ago"
				if age > silent {
					hb += " SILENT"
				}
			}
			bufs := "-"
			if h.Buffer != nil {
				bufs = fmt.Sprintf("%d queued, %d dropped", h.Buffer.Queued, h.Buffer.Dropped)
			}
			if len(h.Pools) == 0 {
				fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t%s\n", h.Host, hb, bufs)
			}
			for i, p := range h.Pools {
				name := h.Host
				if i > 0 {
					name, hb, bufs = "", "", ""
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f%%\t%d\t%s\n", name, hb, p.Name, p.State, p.CapacityPct, p.Errors, bufs)
			}
		}
		tw.Flush()
		if len(hosts) == 0 {
			fmt.Fprintln(w, "no hosts on the bus yet")
		}
	}
	if problems > 0 {
		return withCode(exitFailure, fmt.Errorf("%d problem(s) found", problems))
	}
	return nil
}

func nonNil(p []*zfs.Pool) []*zfs.Pool {
	if p == nil {
		return []*zfs.Pool{}
	}
	return p
}

// readStatusFile parses a saved output, choosing the parser by content.
func readStatusFile(path string) ([]*zfs.Pool, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	return parseStatus(data, input.Name(path))
}

// readInput reads a saved output named on the command line, or stdin for
// "-", bounded (input.MaxToolOutput); an empty one is an error, never "no
// pools, all fine".
func readInput(path string) ([]byte, error) {
	data, err := input.Read(path, input.MaxToolOutput)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty: save the tool's output there first (e.g. zpool status > FILE)", input.Name(path))
	}
	return data, nil
}

// parseStatus reads a saved or pasted output (zfs.Unpaste), choosing the
// parser by content. What holds no status is an error, never "no pools".
func parseStatus(data []byte, name string) ([]*zfs.Pool, error) {
	var pools []*zfs.Pool
	var err error
	data = zfs.Unpaste(data)
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, fmt.Errorf("%s holds no zpool status output, only markdown fences or log prefixes: paste the lines of the output itself", name)
	}
	if t[0] == '{' {
		pools, err = zfs.ParseStatusJSON(bytes.NewReader(data))
	} else {
		pools, err = zfs.ParseStatusText(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not a zpool status output zwatch can read: %w", name, err)
	}
	return pools, nil
}

// liveStatus reads the pools once, with the reader the daemon polls, and
// their datasets and snapshots when there are pools.
func liveStatus(ctx context.Context, g *globals) ([]*zfs.Pool, *datasetsView, error) {
	l, err := g.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	c := &collectors.ZpoolStatus{Runner: execx.New(l.Config.ZFS.CommandTimeout.D()), Zpool: l.Config.ZFS.Zpool}
	sd, err := c.Read(ctx)
	if err != nil {
		if execx.KindOf(err) == execx.KindMissing {
			return nil, nil, fmt.Errorf("%s not found: install zfsutils-linux (or set zfs.zpool), or use --input FILE", l.Config.ZFS.Zpool)
		}
		return nil, nil, err
	}
	if len(sd.Pools) == 0 {
		return sd.Pools, nil, nil
	}
	names := make([]string, 0, len(sd.Pools))
	for _, p := range sd.Pools {
		names = append(names, p.Name)
	}
	v := liveDatasets(ctx, &l.Config, names)
	return sd.Pools, &v, nil
}

// countProblems counts pools not ONLINE, vdevs with errors, and data errors
// (known or not).
func countProblems(pools []*zfs.Pool) int {
	n := 0
	for _, p := range pools {
		if p.State != zfs.StateOnline || p.DataErrors.Count > 0 || p.ErrorsUnknown {
			n++ // unknown data errors are not "no errors"
		}
		for _, cv := range p.AllVdevs() {
			for _, l := range cv.Vdev.Leaves() {
				if l.ReadErrors+l.WriteErrors+l.ChecksumErrors > 0 || (l.State != zfs.StateOnline && l.State != zfs.StateAvail && cv.Class != "spares") {
					n++
				}
			}
		}
	}
	return n
}

// renderPools prints pools for a person: state first, then the tree.
func renderPools(w io.Writer, pools []*zfs.Pool, datasets *datasetsView) {
	now := time.Now()
	if len(pools) == 0 {
		fmt.Fprintln(w, "no pools")
		return
	}
	for i, p := range pools {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "pool %s: %s\n", p.Name, p.State)
		if slices.Contains(p.Notes, zfs.PastedPoolNote) {
			fmt.Fprintln(w, "  (a pasted fragment without its pool: line: named after the first row of its config table)")
		}
		if p.Status != "" {
			fmt.Fprintf(w, "  status: %s\n", oneLine(p.Status))
		}
		if p.Action != "" {
			fmt.Fprintf(w, "  action: %s\n", oneLine(p.Action))
		}
		if p.MsgID != "" {
			fmt.Fprintf(w, "  see:    %s\n", p.MsgID)
		}
		fmt.Fprintf(w, "  scan:   %s\n", describeScan(p.Scan))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  VDEV\tSTATE\tREAD\tWRITE\tCKSUM\tNOTES")
		for _, cv := range p.AllVdevs() {
			if cv.Class != "data" {
				fmt.Fprintf(tw, "  %s\t\t\t\t\t\n", cv.Class)
			}
			writeVdev(tw, cv.Vdev, 2)
		}
		tw.Flush()
		switch {
		case p.ErrorsUnknown && p.DataErrors.Count == 0:
			fmt.Fprintf(w, "  errors: unknown (%s); run 'zpool status -v %s' to see them\n", errorsUnknownWhy(p), p.Name)
		case p.DataErrors.Count > 0:
			fmt.Fprintf(w, "  errors: %d permanent data errors\n", p.DataErrors.Count)
			for _, f := range p.DataErrors.Files {
				fmt.Fprintf(w, "    %s\n", f)
			}
		default:
			fmt.Fprintln(w, "  errors: none")
		}
		switch {
		case datasets == nil:
		case datasets.Err != nil:
			fmt.Fprintf(w, "  datasets: unknown: %v\n", datasets.Err)
		case datasets.find(p.Name) != nil:
			renderPoolDatasets(w, datasets.find(p.Name), now)
		}
	}
	if datasets == nil {
		return
	}
	// Pools zfs list names that zpool status did not (imported between the two).
	for i := range datasets.Pools {
		d := &datasets.Pools[i]
		if !slices.ContainsFunc(pools, func(p *zfs.Pool) bool { return p.Name == d.Pool }) {
			fmt.Fprintf(w, "\npool %s (listed by zfs list, not by zpool status):\n", d.Pool)
			renderPoolDatasets(w, d, now)
		}
	}
}

// errorsUnknownWhy says why a pool's data errors are unknown: zpool's own
// words when it printed an errors: line without a count, else the missing line.
func errorsUnknownWhy(p *zfs.Pool) string {
	for _, n := range p.Notes {
		if why, ok := strings.CutPrefix(n, "errors: "); ok {
			return "zpool said: " + oneLine(why)
		}
	}
	return "the input has no errors: line"
}

func writeVdev(w io.Writer, v *zfs.Vdev, depth int) {
	name := v.Name
	if v.Was != "" {
		name += " (was " + v.Was + ")"
	}
	approx := ""
	if v.ErrorsApproximate {
		approx = "~"
	}
	fmt.Fprintf(w, "%s%s\t%s\t%s%d\t%s%d\t%s%d\t%s\n", strings.Repeat("  ", depth), name, v.State,
		approx, v.ReadErrors, approx, v.WriteErrors, approx, v.ChecksumErrors, strings.Join(v.Notes, "; "))
	for _, c := range v.Children {
		writeVdev(w, c, depth+1)
	}
}

func describeScan(s zfs.Scan) string {
	switch {
	case s.Function == "" || s.Function == zfs.ScanNone:
		return "never scrubbed"
	case s.State == zfs.ScanStateScanning:
		return fmt.Sprintf("%s in progress, %.1f%% done", s.Function, s.PercentDone)
	case s.State == zfs.ScanStateFinished:
		end := ""
		if s.End != nil {
			end = " on " + s.End.Format("2006-01-02 15:04")
		}
		return fmt.Sprintf("%s finished%s, %d errors, %d bytes repaired", s.Function, end, s.Errors, s.RepairedBytes)
	}
	return s.Function + " " + s.State
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
