package replace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/disk"
	"github.com/zwatch/zwatch/execx"
	"github.com/zwatch/zwatch/zfs"
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

// ZpoolStatus is the live StatusSource: `zpool status -j --json-int -p` where the
// installed OpenZFS has JSON output (2.3 and later) and ParseJSON is set,
// else `zpool status -p` text.
type ZpoolStatus struct {
	Runner Runner
	// ParseJSON reads `zpool status -j` (zfs.ParseStatusJSON); nil to use text only.
	ParseJSON func(io.Reader) ([]*zfs.Pool, error)
	// ParseText reads the text output; nil means zfs.ParseStatusText.
	ParseText func(io.Reader) ([]*zfs.Pool, error)
}

// Status runs zpool status for pool (all pools when "").
func (z ZpoolStatus) Status(ctx context.Context, pool string) ([]*zfs.Pool, error) {
	if z.ParseJSON != nil {
		res, err := z.Runner.Run(ctx, "zpool", withPool([]string{"status", "-j", "--json-int", "-p"}, pool)...)
		if err == nil {
			return z.ParseJSON(bytes.NewReader(res.Stdout))
		}
		// Before 2.3 zpool rejects -j; any other failure will recur below
		// with the text command and be reported from there.
		if execx.KindOf(err) != execx.KindFailed {
			return nil, err
		}
	}
	res, err := z.Runner.Run(ctx, "zpool", withPool([]string{"status", "-p"}, pool)...)
	if err != nil {
		return nil, err
	}
	parse := z.ParseText
	if parse == nil {
		parse = zfs.ParseStatusText
	}
	return parse(bytes.NewReader(res.Stdout))
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

// withPool appends the pool operand. Pool names start with a letter, so
// one cannot be taken for an option.
func withPool(args []string, pool string) []string {
	if pool == "" {
		return args
	}
	return append(args, pool)
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
