package collectors

import (
	"context"
	"errors"
	"io"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/zfs"
)

// Streamer runs a tool whose stdout is read as it comes, under the same
// rules as Runner. *execx.Runner implements it (Stream).
type Streamer interface {
	Stream(ctx context.Context, read func(io.Reader) error, name string, args ...string) (execx.Result, error)
}

// Snapshots publishes every dataset's snapshots summed up: count, space
// held, newest, and the snapshot tool's schedule read from the names. The
// listing of a box with 50,000 snapshots is streamed into the summary line
// by line; no line is kept.
type Snapshots struct {
	Runner Streamer
	Zfs    string
}

// Name implements Collector.
func (c *Snapshots) Name() string { return "snapshots" }

// Collect implements Collector.
func (c *Snapshots) Collect(ctx context.Context, pub Publisher) error {
	return PublishRead(ctx, pub, facts.Snapshots, c.Name(), c.Read)
}

// Read runs one `zfs list -Hp -t snapshot -o name,creation,used -s
// creation`. A snapshot destroyed while zfs lists (a pruning run) makes zfs
// exit 1 with "dataset does not exist"; what it printed is kept.
func (c *Snapshots) Read(ctx context.Context) (facts.SnapshotsData, error) {
	var stats []zfs.SnapshotStats
	var total int
	res, err := c.Runner.Stream(ctx, func(r io.Reader) error {
		var perr error
		stats, total, perr = zfs.SummarizeSnapshots(r)
		return perr
	}, c.Zfs, "list", "-Hp", "-t", "snapshot", "-o", "name,creation,used", "-s", "creation")
	var ee *execx.Error
	switch {
	case err == nil:
	case !errors.As(err, &ee):
		if ctx.Err() != nil {
			return facts.SnapshotsData{}, err
		}
		return facts.SnapshotsData{}, &ParseError{Source: "zfs list -t snapshot", Err: err}
	case !onlyVanished(err, res.Stderr):
		return facts.SnapshotsData{}, err
	}
	if stats == nil {
		stats = []zfs.SnapshotStats{}
	}
	return facts.SnapshotsData{Datasets: stats, Total: total}, nil
}
