package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
)

// datasetAlerts are the alerts `zwatch status` shows under a pool: what
// the rules say of its datasets and snapshots right now.
var datasetAlerts = map[string]bool{
	"DatasetLocked": true, "DatasetNotMounted": true, "KeyFileProblem": true, "DatasetQuota": true,
	"SnapshotStale": true, "SnapshotCount": true, "ReplicationStale": true, "ReplicationInterrupted": true,
}

// poolDatasets is, for one pool, what `zwatch status` shows of its datasets
// and snapshots (docs/status-schema.md).
type poolDatasets struct {
	Pool      string            `json:"pool"`
	Datasets  int               `json:"datasets"`
	Problems  []datasetProblem  `json:"problems"`
	Snapshots snapshotsOverview `json:"snapshots"`
}

// datasetProblem is one alert the rules raise for a dataset now, whether
// or not it has waited its `for` yet.
type datasetProblem struct {
	Dataset  string `json:"dataset"`
	Alert    string `json:"alert"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
}

// snapshotsOverview sums up a pool's snapshots.
type snapshotsOverview struct {
	Count     int    `json:"count"`
	Datasets  int    `json:"datasets"`
	UsedBytes uint64 `json:"used_bytes"`
	// Newest is the newest snapshot's full name and creation time.
	Newest   string     `json:"newest,omitempty"`
	NewestAt *time.Time `json:"newest_at,omitempty"`
}

// datasetsView is the datasets part of `zwatch status`: per pool, or the
// reason it could not be read (never an empty "all fine").
type datasetsView struct {
	Pools []poolDatasets
	Err   error
}

// liveDatasets reads the datasets and snapshots once, with the collectors
// the daemon polls, and judges them with the rules the daemon runs.
func liveDatasets(ctx context.Context, c *config.Config, pools []string) datasetsView {
	runner := execx.New(c.ZFS.CommandTimeout.D())
	ds, err := (&collectors.Datasets{Runner: runner, Zfs: c.ZFS.Zfs}).Read(ctx)
	if err != nil {
		return datasetsView{Err: fmt.Errorf("datasets could not be read: %w", err)}
	}
	snaps, err := (&collectors.Snapshots{Runner: runner, Zfs: c.ZFS.Zfs}).Read(ctx)
	if err != nil {
		return datasetsView{Err: fmt.Errorf("snapshots could not be read: %w", err)}
	}
	problems, err := judgeDatasets(c, ds, snaps, time.Now())
	if err != nil {
		return datasetsView{Err: err}
	}
	return datasetsView{Pools: groupByPool(pools, ds, snaps, problems)}
}

// judgeDatasets runs the rule engine over the two facts, as the daemon
// would on receiving them.
func judgeDatasets(c *config.Config, ds facts.DatasetsData, snaps facts.SnapshotsData, now time.Time) ([]alert.Alert, error) {
	e := rules.NewEngine(c.Rules, nil)
	for _, f := range []struct {
		kind, collector string
		data            any
	}{{facts.Datasets.Name(), "datasets", ds}, {facts.Snapshots.Name(), "snapshots", snaps}} {
		raw, err := json.Marshal(f.data)
		if err != nil {
			return nil, err
		}
		env := bus.Envelope{Schema: bus.Schema(f.kind), Host: c.Host, Collector: f.collector, CollectedAt: now, Data: raw}
		if err := e.Observe(env, now); err != nil {
			return nil, fmt.Errorf("judging the datasets: %w", err)
		}
	}
	var out []alert.Alert
	for _, a := range e.Alerts(c.Host) {
		if datasetAlerts[a.Name] && a.State != alert.Resolved {
			out = append(out, a)
		}
	}
	return out, nil
}

// groupByPool puts datasets, snapshots and problems under their pools, in
// the order of pools (zpool status), then any other pool the datasets name.
func groupByPool(pools []string, ds facts.DatasetsData, snaps facts.SnapshotsData, problems []alert.Alert) []poolDatasets {
	byPool := map[string]*poolDatasets{}
	order := append([]string(nil), pools...)
	get := func(name string) *poolDatasets {
		p := byPool[name]
		if p == nil {
			p = &poolDatasets{Pool: name, Problems: []datasetProblem{}}
			byPool[name] = p
			if !contains(order, name) {
				order = append(order, name)
			}
		}
		return p
	}
	for _, d := range ds.Datasets {
		get(poolOf(d.Name)).Datasets++
	}
	for _, s := range snaps.Datasets {
		p := get(poolOf(s.Dataset))
		o := &p.Snapshots
		o.Count += s.Count
		o.Datasets++
		o.UsedBytes += s.UsedBytes
		if o.NewestAt == nil || s.Newest.After(*o.NewestAt) {
			at := s.Newest
			o.NewestAt, o.Newest = &at, s.Dataset+"@"+s.NewestName
		}
	}
	for _, a := range problems {
		pool := a.Labels["pool"]
		if pool == "" {
			pool = poolOf(a.Labels["dataset"])
		}
		p := get(pool)
		p.Problems = append(p.Problems, datasetProblem{Dataset: a.Labels["dataset"], Alert: a.Name, Severity: string(a.Severity), Summary: a.Summary})
	}
	out := make([]poolDatasets, 0, len(order))
	for _, name := range order {
		p := get(name)
		sort.SliceStable(p.Problems, func(i, j int) bool {
			if p.Problems[i].Dataset != p.Problems[j].Dataset {
				return p.Problems[i].Dataset < p.Problems[j].Dataset
			}
			return p.Problems[i].Alert < p.Problems[j].Alert
		})
		out = append(out, *p)
	}
	return out
}

func poolOf(dataset string) string {
	pool, _, _ := strings.Cut(dataset, "/")
	return pool
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// problems counts what status exits 1 for: every dataset alert, and
// datasets that could not be read at all.
func (v datasetsView) problems() int {
	if v.Err != nil {
		return 1
	}
	n := 0
	for _, p := range v.Pools {
		n += len(p.Problems)
	}
	return n
}

// find returns the view of one pool, nil when it has no datasets listed.
func (v datasetsView) find(pool string) *poolDatasets {
	for i := range v.Pools {
		if v.Pools[i].Pool == pool {
			return &v.Pools[i]
		}
	}
	return nil
}

// renderPoolDatasets prints a pool's datasets part under its tree.
func renderPoolDatasets(w io.Writer, p *poolDatasets, now time.Time) {
	switch len(p.Problems) {
	case 0:
		fmt.Fprintf(w, "  datasets: %d, none locked, unmounted or with stale snapshots\n", p.Datasets)
	default:
		fmt.Fprintf(w, "  datasets: %d, %d problem(s)\n", p.Datasets, len(p.Problems))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, pr := range p.Problems {
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", pr.Dataset, pr.Severity, pr.Alert, pr.Summary)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "  snapshots: %s\n", describeSnapshots(p.Snapshots, now))
}

func describeSnapshots(o snapshotsOverview, now time.Time) string {
	if o.Count == 0 {
		return "none"
	}
	s := fmt.Sprintf("%d on %d dataset(s), holding %s", o.Count, o.Datasets, units.IEC(o.UsedBytes))
	if o.NewestAt != nil {
		s += fmt.Sprintf("; newest %s (%s ago)", o.Newest, units.Age(now.Sub(*o.NewestAt)))
	}
	return s
}
