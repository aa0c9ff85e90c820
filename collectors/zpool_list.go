package collectors

import (
	"bytes"
	"context"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/zfs"
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
// dataset quotas from `zfs list -Hp`. It is cheap, so it runs often: it is
// the fast path that notices a pool leaving ONLINE.
type ZpoolList struct {
	Runner Runner
	Zpool  string
	Zfs    string
	// Hang, when set, runs when a poll times out (HangProbe).
	Hang *HangProbe
}

// Name implements Collector.
func (c *ZpoolList) Name() string { return "zpool_list" }

// Collect implements Collector.
func (c *ZpoolList) Collect(ctx context.Context, pub Publisher) error {
	err := PublishRead(ctx, pub, facts.KindZpoolCapacity, c.Name(), c.Read)
	c.Hang.Note(err)
	return err
}

// Read runs zpool list, and zfs list for the quotas, once.
func (c *ZpoolList) Read(ctx context.Context) (facts.CapacityData, error) {
	res, err := c.Runner.Run(ctx, c.Zpool, "list", "-Hp")
	if err != nil {
		return facts.CapacityData{}, err
	}
	pools, err := zfs.ParseListColumns(bytes.NewReader(res.Stdout), listColumns(res.Stdout))
	if err != nil {
		return facts.CapacityData{}, &ParseError{Source: "zpool list", Err: err}
	}
	data := facts.CapacityData{Pools: pools}
	if len(pools) > 0 && c.Zfs != "" {
		// Quotas are a refinement: a failure here must not hide pool health.
		res, err := c.Runner.Run(ctx, c.Zfs, "list", "-Hp", "-o", "name,used,avail,quota,refquota")
		if err == nil {
			if ds, perr := zfs.ParseDatasets(bytes.NewReader(res.Stdout)); perr == nil {
				data.Datasets = ds
			}
		}
	}
	return data, nil
}
