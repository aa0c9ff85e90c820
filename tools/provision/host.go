package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/zwatch/zwatch/internal/execx"
)

// Host is the machine being provisioned. Everything provision learns about
// it (sysfs, /dev/disk/by-id, /proc, tool output) and everything it changes
// goes through a Host, so tests run against fixture trees and canned output.
type Host interface {
	// Root is the directory the machine's filesystem is seen at: "/" live, a
	// fixture tree in tests. disk.Discover and the resolver read sys/block
	// and dev/disk below it.
	Root() string
	// ReadFile reads a file by its absolute path on the host (/proc/swaps),
	// relative to Root.
	ReadFile(name string) ([]byte, error)
	// Run runs argv directly (never through a shell). A non-zero exit is a
	// Result with an *execx.Error of kind failed.
	Run(ctx context.Context, argv []string) (execx.Result, error)
	// WriteFile creates name with perm; it fails if name exists.
	WriteFile(name string, data []byte, perm fs.FileMode) error
}

// LiveHost is the machine zwatch runs on.
type LiveHost struct {
	runner *execx.Runner
	// long runs zpool and zfs: zpool create on many disks takes longer
	// than a collector's poll.
	long *execx.Runner
}

// NewLiveHost returns the running machine, with timeout for each command
// (zpool create and zfs create get four times as long).
func NewLiveHost(timeout time.Duration) *LiveHost {
	if timeout <= 0 {
		timeout = time.Minute
	}
	return &LiveHost{runner: execx.New(timeout), long: execx.New(4 * timeout)}
}

// Root is "/".
func (h *LiveHost) Root() string { return "/" }

// ReadFile reads a file of the live system.
func (h *LiveHost) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// Run runs argv through execx.
func (h *LiveHost) Run(ctx context.Context, argv []string) (execx.Result, error) {
	if len(argv) == 0 {
		return execx.Result{}, errors.New("empty command")
	}
	if argv[0] == "zpool" || argv[0] == "zfs" {
		return h.long.Run(ctx, argv[0], argv[1:]...)
	}
	return h.runner.Run(ctx, argv[0], argv[1:]...)
}

// WriteFile creates a new file with perm, refusing to replace one.
func (h *LiveHost) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Close()
}

// readDirNames lists a directory below the host's root; nil when missing.
func readDirNames(h Host, name string) []string {
	entries, err := os.ReadDir(filepath.Join(h.Root(), name))
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// exists reports whether name exists below the host's root (links followed).
func exists(h Host, name string) bool {
	_, err := os.Stat(filepath.Join(h.Root(), name))
	return err == nil
}

// runOut runs argv and returns stdout, with the error (nil on exit 0).
func runOut(ctx context.Context, h Host, argv ...string) ([]byte, int, error) {
	res, err := h.Run(ctx, argv)
	return res.Stdout, res.ExitCode, err
}
