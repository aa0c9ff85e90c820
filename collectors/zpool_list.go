//go:build zfsparsers

package collectors

import (
	"bytes"
	"context"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/execx"
	"github.com/zwatch/zwatch/zfs"
)

// poolListColumns are asked for by name so that the output does not depend
// on the version's default column set (CKPOINT, EXPANDSZ came and went).
var poolListColumns = []string{"name", "size", "allocated", "free", "fragmentation", "capacity", "health"}

// ZpoolList publishes pool health and capacity from `zpool list -Hp` and
// dataset quotas from `zfs list -Hp`. It is cheap, so it runs often: it is
// the fast path that notices a pool leaving ONLINE.
type ZpoolList struct {
	Runner *execx.Runner
	Zpool  string
	Zfs    string
}

// Name implements Collector.
func (c *ZpoolList) Name() string { return "zpool_list" }

// Collect implements Collector.
func (c *ZpoolList) Collect(ctx context.Context, pub Publisher) error {
	res, err := c.Runner.Run(ctx, c.Zpool, "list", "-Hp", "-o", joinComma(poolListColumns))
	if err != nil {
		return err
	}
	pools, err := zfs.ParseListColumns(bytes.NewReader(res.Stdout), poolListColumns)
	if err != nil {
		return &ParseError{Source: "zpool list", Err: err}
	}
	data := CapacityData{Pools: pools}
	if len(pools) > 0 && c.Zfs != "" {
		// Quotas are a refinement: a failure here must not hide pool health.
		res, err := c.Runner.Run(ctx, c.Zfs, "list", "-Hp", "-t", "filesystem,volume", "-o", "name,used,avail,quota,refquota")
		if err == nil {
			if ds, perr := zfs.ParseDatasets(bytes.NewReader(res.Stdout)); perr == nil {
				data.Datasets = ds
			}
		}
	}
	return pub.Publish(ctx, bus.KindZpoolCapacity, c.Name(), data)
}

func joinComma(ss []string) string {
	var b bytes.Buffer
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s)
	}
	return b.String()
}
