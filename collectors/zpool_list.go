package collectors

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
)

// zol07ListColumns are the default columns of ZoL 0.7, before CKPOINT.
var zol07ListColumns = []string{"name", "size", "alloc", "free", "expandsz", "frag", "cap", "dedup", "health", "altroot"}

// listColumns picks the default column set by the field count of the first
// line: 11 since 0.8 (CKPOINT added), 10 in 0.7.
func listColumns(out []byte) []string {
	line, _, _ := bytes.Cut(out, []byte("\n"))
	if bytes.Count(line, []byte("\t")) == len(zol07ListColumns)-1 {
		return zol07ListColumns
	}
	return zfs.DefaultListColumns
}

// ZpoolList publishes pool health and capacity from `zpool list -Hp` and
// the pools' root datasets from `zfs list -Hp` (their used and available
// space: what the pool can really hold). It is cheap, so it runs often: it
// is the fast path that notices a pool leaving ONLINE, or leaving.
// Every dataset's quota is the datasets collector's.
type ZpoolList struct {
	Runner Runner
	Zpool  string
	Zfs    string
	// Hang, when set, runs when a poll times out (HangProbe).
	Hang *HangProbe
	// PoolsChanged, when set, is called when the pools listed differ from
	// the previous poll's (a pool imported, exported, destroyed or gone):
	// the daemon pokes the datasets and zpool_import collectors on it. It is
	// the sure path; an event on zpool events is the fast one, and may come
	// before the pool has left the list.
	PoolsChanged func()

	mu   sync.Mutex
	last []string // the previous poll's pool names, sorted; nil before the first
}

// Name implements Collector.
func (c *ZpoolList) Name() string { return "zpool_list" }

// Collect implements Collector.
func (c *ZpoolList) Collect(ctx context.Context, pub Publisher) error {
	err := PublishRead(ctx, pub, facts.ZpoolCapacity, c.Name(), c.Read)
	c.Hang.Note(err)
	return err
}

// Read runs zpool list, and zfs list of the pools' root datasets, once.
func (c *ZpoolList) Read(ctx context.Context) (facts.CapacityData, error) {
	res, err := c.Runner.Run(ctx, c.Zpool, "list", "-Hp")
	if err != nil {
		return facts.CapacityData{}, err
	}
	pools, err := zfs.ParseListColumns(bytes.NewReader(res.Stdout), listColumns(res.Stdout))
	if err != nil {
		return facts.CapacityData{}, &ParseError{Source: "zpool list", Err: err}
	}
	c.notePools(pools)
	data := facts.CapacityData{Pools: pools}
	if len(pools) > 0 && c.Zfs != "" {
		args := []string{"list", "-Hp", "-o", "name,used,avail,quota,refquota"}
		for _, p := range pools {
			args = append(args, p.Name)
		}
		// The root datasets are a refinement: a failure here must not hide
		// pool health.
		res, err := c.Runner.Run(ctx, c.Zfs, args...)
		if err == nil {
			if ds, perr := zfs.ParseDatasets(bytes.NewReader(res.Stdout)); perr == nil {
				data.Datasets = ds
			}
		}
	}
	return data, nil
}

// notePools calls PoolsChanged when the set of pool names moved.
func (c *ZpoolList) notePools(pools []zfs.PoolList) {
	names := make([]string, 0, len(pools))
	for _, p := range pools {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	c.mu.Lock()
	changed := c.last != nil && !slices.Equal(c.last, names)
	c.last = names
	c.mu.Unlock()
	if changed && c.PoolsChanged != nil {
		c.PoolsChanged()
	}
}
