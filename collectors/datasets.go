package collectors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/mountcheck"
	"github.com/zwatch/zwatch/model/zfs"
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
	// Root is where this machine's root filesystem is seen, prefixed to key
	// file paths and mountpoints: "" is /; tests (and a container with the
	// host's / mounted elsewhere) set it.
	Root string

	mu      sync.Mutex
	cols    []string // the -o list this zfs accepts; nil before the first poll
	missing []string // the properties it rejected, in the order dropped
	// checking is set while a poll's file checks run; one stuck in the
	// kernel is not joined by another.
	checking bool
}

// Name implements Collector.
func (c *Datasets) Name() string { return "datasets" }

// Collect implements Collector. Lines that could not be read (a tab in a
// mountpoint) are reported as a collector error, and the datasets read
// around them are still published: one odd mountpoint must not hide a
// locked dataset.
func (c *Datasets) Collect(ctx context.Context, pub Publisher) error {
	data, err := c.Read(ctx)
	var pe *ParseError
	if err != nil && (!errors.As(err, &pe) || len(data.Datasets) == 0) {
		return err
	}
	if perr := Publish(ctx, pub, facts.Datasets, c.Name(), data); perr != nil {
		return perr
	}
	return err
}

// Read lists the datasets once and checks their key files and mountpoints.
// With lines it could not read it returns the others and a *ParseError.
func (c *Datasets) Read(ctx context.Context) (facts.DatasetsData, error) {
	list, missing, bad, err := c.list(ctx)
	if err != nil {
		return facts.DatasetsData{}, err
	}
	data := facts.DatasetsData{Missing: missing, Datasets: make([]facts.DatasetState, len(list))}
	for i, d := range list {
		data.Datasets[i].DatasetProps = d
	}
	c.checkLocal(ctx, data.Datasets)
	if bad != nil {
		return data, &ParseError{Source: "zfs list", Err: bad}
	}
	return data, nil
}

// list runs zfs list; a property this release does not know is dropped and
// the list retried, and the working list kept for the collector's life.
func (c *Datasets) list(ctx context.Context) (list []zfs.DatasetProps, missing []string, bad, err error) {
	c.mu.Lock()
	cols := slices.Clone(c.cols)
	missing = slices.Clone(c.missing)
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
			return nil, nil, nil, err
		}
		c.mu.Lock()
		c.cols, c.missing = cols, missing
		c.mu.Unlock()
		list, bad = parseDatasetLines(res.Stdout, cols)
		return list, slices.Clone(missing), bad, nil
	}
}

// parseDatasetLines parses each line on its own, so that one line zfs.
// ParseDatasetProps cannot read costs that dataset, not the listing; bad
// names the lines skipped (at most the first few).
func parseDatasetLines(out []byte, cols []string) (list []zfs.DatasetProps, bad error) {
	var errs []error
	skipped := 0
	for n, line := range bytes.Split(out, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ds, err := zfs.ParseDatasetProps(bytes.NewReader(line), cols)
		if err != nil {
			if skipped++; len(errs) < 3 {
				errs = append(errs, fmt.Errorf("line %d skipped: %s", n+1, strings.TrimPrefix(err.Error(), "zfs: zfs list line 1: ")))
			}
			continue
		}
		list = append(list, ds...)
	}
	if skipped > len(errs) {
		errs = append(errs, fmt.Errorf("and %d more lines", skipped-len(errs)))
	}
	return list, errors.Join(errs...)
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
			checkDataset(&work[i], c.Root, c.UnderneathLimit)
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

func checkDataset(s *facts.DatasetState, root string, limit int) {
	if path, ok := keyFilePath(s.DatasetProps); ok {
		kf := mountcheck.KeyFile(filepath.Join(root, path), s.KeyFormat)
		kf.Path = path
		if root != "" {
			kf.Detail = strings.ReplaceAll(kf.Detail, root, "")
		}
		s.KeyFile = &kf
	}
	if meantToBeMountedButNot(s.DatasetProps) {
		dc := mountcheck.Underneath(filepath.Join(root, s.Mountpoint), limit)
		dc.Path = s.Mountpoint
		if root != "" {
			dc.Error = strings.ReplaceAll(dc.Error, root, "")
		}
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
