package collectors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
)

// ErrNotAvailable marks a source that does not exist on this machine (no
// ZFS module loaded, another OS): reported once, not as a failure each poll.
var ErrNotAvailable = errors.New("not available on this machine")

// ARC publishes ARC statistics, with hit ratios over the poll interval.
type ARC struct {
	// Path of arcstats on Linux; FreeBSD reads sysctl instead.
	Path   string
	Runner Runner

	prev map[string]uint64
}

// Name implements Collector.
func (c *ARC) Name() string { return "arc" }

// Collect implements Collector.
func (c *ARC) Collect(ctx context.Context, pub Publisher) error {
	return PublishRead(ctx, pub, facts.ARC, c.Name(), c.Read)
}

// Read reads the counters once. Hit ratios are over the time since the
// previous Read, so each Read moves that starting point.
func (c *ARC) Read(ctx context.Context) (zfs.ARC, error) {
	cur, err := c.read(ctx)
	if err != nil {
		return zfs.ARC{}, err
	}
	arc := zfs.ARCFrom(cur, c.prev)
	c.prev = cur
	return arc, nil
}

func (c *ARC) read(ctx context.Context) (map[string]uint64, error) {
	if runtime.GOOS == "freebsd" {
		res, err := c.Runner.Run(ctx, "sysctl", "kstat.zfs.misc.arcstats")
		if err != nil {
			return nil, err
		}
		m, err := zfs.ParseArcSysctl(bytes.NewReader(res.Stdout))
		if err != nil {
			return nil, &ParseError{Source: "sysctl kstat.zfs.misc.arcstats", Err: err}
		}
		return m, nil
	}
	path := c.Path
	if path == "" {
		path = "/proc/spl/kstat/zfs/arcstats"
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist (ZFS kernel module not loaded): %w", path, ErrNotAvailable)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := zfs.ParseArcstats(f)
	if err != nil {
		return nil, &ParseError{Source: path, Err: err}
	}
	return m, nil
}
