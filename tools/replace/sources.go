package replace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// StatusSource reads live pool state. pool "" means every pool.
type StatusSource interface {
	Status(ctx context.Context, pool string) ([]*zfs.Pool, error)
}

// AshiftSource is optionally implemented by a StatusSource that can tell a
// pool's ashift; Run uses it to refuse 4Kn disks for ashift=9 vdevs.
type AshiftSource interface {
	Ashift(ctx context.Context, pool string) (int, error)
}

// DiskSource lists the disks of the machine.
type DiskSource interface {
	Disks(ctx context.Context) ([]disk.Identity, error)
}

// DiskFunc adapts a function to DiskSource, e.g.
// DiskFunc(func(context.Context) ([]disk.Identity, error) { return disk.Discover("/") }).
type DiskFunc func(ctx context.Context) ([]disk.Identity, error)

// Disks calls f.
func (f DiskFunc) Disks(ctx context.Context) ([]disk.Identity, error) { return f(ctx) }

// ZpoolStatus is the live StatusSource: the collector's reader of `zpool
// status` (collectors.ZpoolStatus), JSON where the installed OpenZFS has it
// (2.3 and later), else text, with vdevs under the names zpool prints by
// default: the names a person types and `zpool replace` takes.
type ZpoolStatus struct {
	Runner Runner
	// ParseJSON set (to zfs.ParseStatusJSON) lets Status read `zpool status
	// -j`; nil reads text only. The collector parses either form itself.
	ParseJSON func(io.Reader) ([]*zfs.Pool, error)
}

// Status runs zpool status for pool (all pools when "").
func (z ZpoolStatus) Status(ctx context.Context, pool string) ([]*zfs.Pool, error) {
	c := &collectors.ZpoolStatus{Runner: z.Runner, ShortNames: true, TextOnly: z.ParseJSON == nil}
	sd, err := c.ReadPool(ctx, pool)
	// replace has always shown the parser's own words.
	var pe *collectors.ParseError
	if errors.As(err, &pe) {
		return nil, pe.Err
	}
	if err != nil {
		return nil, err
	}
	return sd.Pools, nil
}

// Ashift reads the pool's ashift property: the value every vdev got at
// creation when it was set explicitly, which is the common practice. 0
// means it was auto-detected and is not known here.
func (z ZpoolStatus) Ashift(ctx context.Context, pool string) (int, error) {
	res, err := z.Runner.Run(ctx, "zpool", "get", "-H", "-p", "-o", "value", "ashift", pool)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if err != nil {
		return 0, fmt.Errorf("zpool get ashift %s: %w", pool, err)
	}
	return n, nil
}

// errNoPool is wrapped when the named pool is not in the status output.
var errNoPool = errors.New("no such pool")

// findPool picks pool name out of pools.
func findPool(pools []*zfs.Pool, name string) (*zfs.Pool, error) {
	for _, p := range pools {
		if p != nil && p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("pool %q: %w (see `zpool list`)", name, errNoPool)
}
