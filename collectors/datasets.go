package collectors

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/execx"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/mountcheck"
	"github.com/zwatch/zwatch/zfs"
)

// defaultCheckTimeout bounds one poll's look at this machine's files (key
// files, mountpoint directories).
const defaultCheckTimeout = 10 * time.Second

// Datasets publishes every filesystem and volume with its mount and key
// state (`zfs list -Hp -t filesystem,volume -o zfs.DatasetPropColumns`),
// and what it finds on this machine about them: the key file of each
// encryption root with a file:// keylocation, and the directory under each
// filesystem that is meant to be mounted but is not. It carries every
// dataset's quota too.
type Datasets struct {
	Runner Runner
	Zfs    string
	// UnderneathLimit bounds each mountpoint walk; mountcheck.DefaultLimit when 0.
	UnderneathLimit int
	// CheckTimeout bounds one poll's file checks: a hung filesystem must not
	// hang the collector. defaultCheckTimeout when 0.
	CheckTimeout time.Duration

	mu      sync.Mutex
	cols    []string // the -o list this zfs accepts; nil before the first poll
	missing []string // the properties it rejected, in the order dropped
	// checking is set while a poll's file checks run; one stuck in the
	// kernel is not joined by another.
	checking bool
}

// Name implements Collector.
func (c *Datasets) Name() string { return "datasets" }

// Collect implements Collector.
func (c *Datasets) Collect(ctx context.Context, pub Publisher) error {
	return PublishRead(ctx, pub, facts.KindDatasets, c.Name(), c.Read)
}

// Read lists the datasets once and checks their key files and mountpoints.
func (c *Datasets) Read(ctx context.Context) (facts.DatasetsData, error) {
	list, missing, err := c.list(ctx)
	if err != nil {
		return facts.DatasetsData{}, err
	}
	data := facts.DatasetsData{Missing: missing, Datasets: make([]facts.DatasetState, len(list))}
	for i, d := range list {
		data.Datasets[i].DatasetProps = d
	}
	c.checkLocal(ctx, data.Datasets)
	return data, nil
}

// list runs zfs list; a property this release does not know is dropped and
// the list retried, and the working list kept for the collector's life.
func (c *Datasets) list(ctx context.Context) ([]zfs.DatasetProps, []string, error) {
	c.mu.Lock()
	cols, missing := slices.Clone(c.cols), slices.Clone(c.missing)
	c.mu.Unlock()
	if cols == nil {
		cols = slices.Clone(zfs.DatasetPropColumns)
	}
	for {
		res, err := c.Runner.Run(ctx, c.Zfs, "list", "-Hp", "-t", "filesystem,volume", "-o", strings.Join(cols, ","))
		if err != nil && execx.KindOf(err) == execx.KindFailed {
			// The name column is never dropped: without it no line is a dataset.
			if prop, ok := zfs.UnknownProperty(res.Stderr); ok && slices.Index(cols, prop) > 0 {
				cols = slices.DeleteFunc(cols, func(c string) bool { return c == prop })
				missing = append(missing, prop)
				continue
			}
		}
		if err != nil && !onlyVanished(err, res.Stderr) {
			return nil, nil, err
		}
		list, perr := zfs.ParseDatasetProps(bytes.NewReader(res.Stdout), cols)
		if perr != nil {
			return nil, nil, &ParseError{Source: "zfs list", Err: perr}
		}
		c.mu.Lock()
		c.cols, c.missing = cols, missing
		c.mu.Unlock()
		return list, slices.Clone(missing), nil
	}
}

// onlyVanished says whether a failed zfs list failed only because datasets
// vanished while it listed ("cannot open 'tank/x': dataset does not exist",
// exit 1): the lines it printed are whole and still true.
func onlyVanished(err error, stderr []byte) bool {
	if execx.KindOf(err) != execx.KindFailed {
		return false
	}
	seen := false
	for _, line := range strings.Split(string(stderr), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "cannot open '") || !strings.HasSuffix(line, "': dataset does not exist") {
			return false
		}
		seen = true
	}
	return seen
}

// checkLocal fills in the key file and mountpoint checks, within the
// check timeout. What a hung filesystem kept from being checked says so;
// it never reads as fine.
func (c *Datasets) checkLocal(ctx context.Context, states []facts.DatasetState) {
	if !slices.ContainsFunc(states, needsCheck) {
		return
	}
	c.mu.Lock()
	busy := c.checking
	c.checking = true
	c.mu.Unlock()
	if busy {
		markUnchecked(states, "the previous poll's check of this machine's files has not finished (a hung filesystem?)")
		return
	}
	timeout := orDefault(c.CheckTimeout, defaultCheckTimeout)
	work := slices.Clone(states) // the checker's own copy: nothing is shared once it is given up on
	done := make(chan struct{})
	go func() {
		defer func() {
			c.mu.Lock()
			c.checking = false
			c.mu.Unlock()
			close(done)
		}()
		for i := range work {
			checkDataset(&work[i], c.UnderneathLimit)
		}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		copy(states, work)
	case <-t.C:
		markUnchecked(states, fmt.Sprintf("not checked: this machine's files gave no answer within %s (a hung filesystem?)", timeout))
	case <-ctx.Done():
		markUnchecked(states, "not checked: zwatch is stopping")
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// keyFilePath is the file of a file:// keylocation on an encryption root.
func keyFilePath(d zfs.DatasetProps) (string, bool) {
	if d.EncryptionRoot == "" || d.EncryptionRoot != d.Name {
		return "", false
	}
	return strings.CutPrefix(d.KeyLocation, "file://")
}

// meantToBeMountedButNot: a filesystem with canmount=on and a path
// mountpoint (not none, legacy or "-") that is not mounted.
func meantToBeMountedButNot(d zfs.DatasetProps) bool {
	return d.Type == "filesystem" && d.CanMount == "on" && strings.HasPrefix(d.Mountpoint, "/") && d.Mounted == "no"
}

func needsCheck(s facts.DatasetState) bool {
	_, key := keyFilePath(s.DatasetProps)
	return key || meantToBeMountedButNot(s.DatasetProps)
}

func checkDataset(s *facts.DatasetState, limit int) {
	if path, ok := keyFilePath(s.DatasetProps); ok {
		kf := mountcheck.KeyFile(path, s.KeyFormat)
		s.KeyFile = &kf
	}
	if meantToBeMountedButNot(s.DatasetProps) {
		dc := mountcheck.Underneath(s.Mountpoint, limit)
		s.Underneath = &dc
	}
}

// markUnchecked records why the checks of states were not made.
func markUnchecked(states []facts.DatasetState, why string) {
	for i := range states {
		s := &states[i]
		if path, ok := keyFilePath(s.DatasetProps); ok {
			s.KeyFile = &facts.KeyFileCheck{Path: path, Problem: facts.KeyFileUnreadable, Detail: why}
		}
		if meantToBeMountedButNot(s.DatasetProps) {
			s.Underneath = &facts.DirContents{Path: s.Mountpoint, Error: why}
		}
	}
}
