package collectors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/zfs"
)

// ZpoolImport publishes the pools that are on this machine's disks, or in
// its pool cache file, but not imported. `zpool import` reads every disk's
// labels, so it does not run every poll: at the first, when the pools
// imported changed since the last (a poke after an import, export or
// destroy lands here), and while the last scan found something or the
// cache file names a pool that is not imported. `zpool import -c FILE`
// and `zpool list -H -o name` are cheap and run every poll.
type ZpoolImport struct {
	Runner Runner
	Zpool  string
	// CacheFile is zfs.cache_file; "" for none.
	CacheFile string

	mu           sync.Mutex
	scanned      bool
	lastImported []string
	lastFound    []zfs.ImportablePool
}

// Name implements Collector.
func (c *ZpoolImport) Name() string { return "zpool_import" }

// Collect implements Collector.
func (c *ZpoolImport) Collect(ctx context.Context, pub Publisher) error {
	return PublishRead(ctx, pub, facts.PoolImport, c.Name(), c.Read)
}

// Read lists the imported pools, reads the cache file's pools, and scans
// the devices when there is reason to.
func (c *ZpoolImport) Read(ctx context.Context) (facts.PoolImportData, error) {
	res, err := c.Runner.Run(ctx, c.Zpool, "list", "-H", "-o", "name")
	if err != nil {
		return facts.PoolImportData{}, err
	}
	data := facts.PoolImportData{Imported: poolNames(res.Stdout)}
	if c.CacheFile != "" {
		if _, err := os.Stat(c.CacheFile); err == nil {
			data.CacheFile = c.CacheFile
			cached, err := c.importable(ctx, "import", "-c", c.CacheFile)
			var ee *execx.Error
			switch {
			case errors.As(err, &ee) && ee.Kind == execx.KindFailed:
				// The device scan below still runs: one bad listing must
				// not hide the other.
				data.CacheError = fmt.Sprintf("zpool import -c %s exited %d: %s", c.CacheFile, ee.ExitCode, strings.TrimSpace(ee.Stderr))
			case err != nil:
				return facts.PoolImportData{}, err
			}
			data.Cached = notImported(cached, data.Imported)
		}
	}
	c.mu.Lock()
	scan := !c.scanned || !slices.Equal(c.lastImported, data.Imported) || len(c.lastFound) > 0 || len(data.Cached) > 0 || data.CacheError != ""
	found := c.lastFound
	c.mu.Unlock()
	if scan {
		found, err = c.importable(ctx, "import")
		if err != nil {
			return facts.PoolImportData{}, err
		}
	}
	c.mu.Lock()
	c.scanned, c.lastImported, c.lastFound = true, data.Imported, found
	c.mu.Unlock()
	data.Found = slices.Clone(found)
	if data.Found == nil {
		data.Found = []zfs.ImportablePool{}
	}
	return data, nil
}

// importable runs one zpool import listing. Nothing to import is "no pools
// available to import" on stderr with exit 0 (2.3.2, k7-none); should a
// release exit 1 with it, that is an empty list too.
func (c *ZpoolImport) importable(ctx context.Context, args ...string) ([]zfs.ImportablePool, error) {
	res, err := c.Runner.Run(ctx, c.Zpool, args...)
	if err != nil {
		if execx.KindOf(err) == execx.KindFailed && bytes.Contains(res.Stderr, []byte("no pools available to import")) {
			return nil, nil
		}
		return nil, err
	}
	pools, err := zfs.ParseImport(bytes.NewReader(res.Stdout))
	if err != nil {
		return nil, &ParseError{Source: "zpool " + strings.Join(args, " "), Err: err}
	}
	return pools, nil
}

// poolNames reads `zpool list -H -o name`, sorted.
func poolNames(out []byte) []string {
	names := []string{}
	for _, line := range strings.Split(string(out), "\n") {
		if name := strings.TrimSpace(line); name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// notImported drops the imported pools from a cache file's listing, which
// may hold every pool imported with it. By name: two pools of one name
// cannot both be in one cache file, as one cannot be imported beside the
// other without a new name.
func notImported(pools []zfs.ImportablePool, imported []string) []zfs.ImportablePool {
	return slices.DeleteFunc(pools, func(p zfs.ImportablePool) bool {
		_, found := slices.BinarySearch(imported, p.Name)
		return found
	})
}
