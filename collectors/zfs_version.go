package collectors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/zfs"
)

// ZFSModuleVersionFile is where Linux shows the loaded zfs module's release.
const ZFSModuleVersionFile = "/sys/module/zfs/version"

// ZFSVersion compares the ZFS userland with the loaded kernel module: after
// a package upgrade without a reboot they differ. It asks `zfs version -j`
// (OpenZFS 2.3+), falls back to the text form on a release that refuses
// -j (remembered), and reads the module's version file when the tool
// cannot say (no zfs version before 0.8, or the module line missing).
type ZFSVersion struct {
	Runner Runner
	Zfs    string
	// ModuleFile is ZFSModuleVersionFile live, a fixture in tests; "" to
	// never read it (FreeBSD has none).
	ModuleFile string

	mu         sync.Mutex
	noJSONFlag bool // zfs version -j was refused once: this release has no -j
}

// Name implements Collector.
func (c *ZFSVersion) Name() string { return "zfs_version" }

// Collect implements Collector.
func (c *ZFSVersion) Collect(ctx context.Context, pub Publisher) error {
	return PublishRead(ctx, pub, facts.ZFSVersion, c.Name(), c.Read)
}

// Read reads both versions once.
func (c *ZFSVersion) Read(ctx context.Context) (facts.ZFSVersionData, error) {
	v, source, toolErr := c.fromTool(ctx)
	if v.Kernel == "" && c.ModuleFile != "" {
		if k, err := c.module(); err == nil {
			v.Kernel = k
			if source == "" {
				source = "sysfs"
			}
		} else if toolErr == nil && !errors.Is(err, fs.ErrNotExist) {
			toolErr = err
		}
	}
	if v.Userland == "" && v.Kernel == "" {
		if toolErr == nil || execx.KindOf(toolErr) == execx.KindMissing {
			return facts.ZFSVersionData{}, fmt.Errorf("zfs version: neither the zfs tool nor %s says which ZFS runs here: %w", c.ModuleFile, ErrNotAvailable)
		}
		return facts.ZFSVersionData{}, toolErr
	}
	return facts.ZFSVersionData{Userland: v.Userland, Kernel: v.Kernel, Source: source}, nil
}

// fromTool runs zfs version -j, else zfs version; source says which answered.
func (c *ZFSVersion) fromTool(ctx context.Context) (zfs.Version, string, error) {
	c.mu.Lock()
	noJSON := c.noJSONFlag
	c.mu.Unlock()
	if !noJSON {
		res, err := c.Runner.Run(ctx, c.Zfs, "version", "-j")
		if err == nil || execx.KindOf(err) == execx.KindFailed {
			if v, perr := zfs.ParseVersionJSON(bytes.NewReader(res.Stdout)); perr == nil {
				return v, "zfs version -j", nil
			}
			// Before 2.3 -j is an unknown option (usage, exit 2); the
			// text form is asked from now on.
			c.mu.Lock()
			c.noJSONFlag = true
			c.mu.Unlock()
		} else {
			return zfs.Version{}, "", err
		}
	}
	res, err := c.Runner.Run(ctx, c.Zfs, "version")
	if err != nil && execx.KindOf(err) != execx.KindFailed {
		return zfs.Version{}, "", err
	}
	// Without the module, zfs version prints the userland line and exits 1.
	v, perr := zfs.ParseVersionText(bytes.NewReader(res.Stdout))
	if perr != nil {
		if err != nil {
			return zfs.Version{}, "", err
		}
		return zfs.Version{}, "", &ParseError{Source: c.Zfs + " version", Err: perr}
	}
	return v, "zfs version", nil
}

func (c *ZFSVersion) module() (string, error) {
	f, err := os.Open(c.ModuleFile)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return zfs.ParseModuleVersion(f)
}
