package collectors

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
)

// importedListing is a real `zpool list -H -o name,health,capacity`
// capture cut to its first column: what `zpool list -H -o name` prints.
func importedListing(t *testing.T, capture string) string {
	t.Helper()
	raw, err := os.ReadFile(captured + capture)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		name, _, _ := strings.Cut(line, "\t")
		b.WriteString(name + "\n")
	}
	path := filepath.Join(t.TempDir(), "zpool-list-H-o-name.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestZpoolImportScansOnlyWhenThereIsReason(t *testing.T) {
	zpool := newAnswers(t, "zpool")
	both, fastOnly := importedListing(t, "a.zpool-list-H-o.txt"), fastOnlyListing(t)
	zpool.answer("list -H -o name", both, "", 0)
	zpool.answer("import", captured+"k7-none.zpool-import.txt", stderrOf(t, "k7-none.zpool-import.txt"), 0)
	c := &ZpoolImport{Runner: execx.New(5 * time.Second), Zpool: zpool.Tool}
	read := func() facts.PoolImportData {
		t.Helper()
		pub := &memPublisher{}
		if err := c.Collect(context.Background(), pub); err != nil {
			t.Fatal(err)
		}
		msgs := pub.all()
		if len(msgs) != 1 || msgs[0].kind != facts.PoolImport.Name() {
			t.Fatalf("published %+v", msgs)
		}
		return msgs[0].data.(facts.PoolImportData)
	}
	// At start: a scan, which finds nothing (real k7-none: "no pools
	// available to import" on stderr, exit 0).
	d := read()
	if len(d.Found) != 0 || len(d.Imported) != 2 || d.CacheFile != "" {
		t.Fatalf("first run %+v", d)
	}
	// Nothing changed: no scan (a scan now would fail the test).
	zpool.answer("import", "", "stand-in: zpool import must not run now\n", 2)
	if d := read(); len(d.Found) != 0 {
		t.Fatalf("second run %+v", d)
	}
	// vault exported (real capture c2: DEGRADED, one disk missing): the
	// imported pools changed, so it scans and finds it.
	zpool.answer("list -H -o name", fastOnly, "", 0)
	zpool.answer("import", captured+"c2-exported.zpool-import.txt", "", 0)
	d = read()
	if len(d.Found) != 1 || d.Found[0].Name != "vault" || d.Found[0].ID != "4831632425058079330" || d.Found[0].State != "DEGRADED" {
		t.Fatalf("after the export %+v", d)
	}
	if len(d.Imported) != 1 || d.Imported[0] != "fast" {
		t.Fatalf("imported %v", d.Imported)
	}
	// It found something, so it looks again: now a second disk is gone (c4).
	zpool.answer("import", captured+"c4-missing.zpool-import.txt", "", 0)
	if d := read(); len(d.Found) != 1 || len(d.Found[0].Missing) != 2 {
		t.Fatalf("while exported %+v", d)
	}
	// Imported again: the set changed, it scans, finds nothing, and stops.
	zpool.answer("list -H -o name", both, "", 0)
	zpool.answer("import", captured+"k7-none.zpool-import.txt", stderrOf(t, "k7-none.zpool-import.txt"), 0)
	if d := read(); len(d.Found) != 0 || len(d.Imported) != 2 {
		t.Fatalf("after the import %+v", d)
	}
	zpool.answer("import", "", "stand-in: zpool import must not run now\n", 2)
	if d := read(); len(d.Found) != 0 {
		t.Fatalf("settled %+v", d)
	}
}

// Step k7 on real 2.3.2: offsite exported while the boot's cache file
// (kept from before the export) still names it, as after a boot that did
// not import it; then its disks removed one by one, then imported again.
func TestZpoolImportReadsTheCacheFile(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "zpool.cache")
	if err := os.WriteFile(cache, []byte("stand-in cache file"), 0o644); err != nil {
		t.Fatal(err)
	}
	zpool := newAnswers(t, "zpool")
	c := &ZpoolImport{Runner: execx.New(5 * time.Second), Zpool: zpool.Tool, CacheFile: cache}
	state := func(list, cached, found string) {
		t.Helper()
		zpool.answer("list -H -o name", captured+list, "", 0)
		zpool.answer("import -c "+cache, captured+cached, stderrOf(t, cached), 0)
		zpool.answer("import", captured+found, stderrOf(t, found), 0)
	}
	read := func() facts.PoolImportData {
		t.Helper()
		d, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	state("k1-healthy.zpool-list-H-o-name.txt", "k7-none.zpool-import-c.txt", "k7-none.zpool-import.txt")
	if d := read(); d.CacheFile != cache || len(d.Cached) != 0 || len(d.Found) != 0 || len(d.Imported) != 3 || d.CacheError != "" {
		t.Fatalf("all imported: %+v", d)
	}
	state("k7-exported.zpool-list-H-o-name.txt", "k7-exported.zpool-import-c-before-export.txt", "k7-exported.zpool-import.txt")
	d := read()
	if len(d.Cached) != 1 || d.Cached[0].Name != "offsite" || len(d.Found) != 1 || d.Found[0].ID != d.Cached[0].ID {
		t.Fatalf("offsite not imported: %+v", d)
	}
	// A device gone: -c first prints "cachefile import failed, retrying".
	state("k7-exported.zpool-list-H-o-name.txt", "k7-missing.zpool-import-c-before-export.txt", "k7-missing.zpool-import.txt")
	d = read()
	if len(d.Cached) != 1 || len(d.Cached[0].Missing) != 1 || len(d.Found) != 1 || len(d.Found[0].Missing) != 1 {
		t.Fatalf("one device missing: %+v", d)
	}
	// Every device gone: -c exits 1; the scan finds nothing. That is not
	// "nothing cached": CacheError says the cache could not be listed.
	state("k7-exported.zpool-list-H-o-name.txt", "k7-both-missing.zpool-import-c-before-export.txt", "k7-both-missing.zpool-import.txt")
	zpool.answer("import -c "+cache, captured+"k7-both-missing.zpool-import-c-before-export.txt", stderrOf(t, "k7-both-missing.zpool-import-c-before-export.txt"), 1)
	d = read()
	if len(d.Found) != 0 || len(d.Cached) != 0 || !strings.Contains(d.CacheError, "no such pool available") {
		t.Fatalf("both devices missing: %+v", d)
	}
	state("k1-healthy.zpool-list-H-o-name.txt", "k7-imported.zpool-import-c.txt", "k7-none.zpool-import.txt")
	if d := read(); len(d.Cached) != 0 || len(d.Found) != 0 || d.CacheError != "" || len(d.Imported) != 3 {
		t.Fatalf("imported again: %+v", d)
	}
	// No cache file: CacheFile says so by being empty.
	c = &ZpoolImport{Runner: execx.New(5 * time.Second), Zpool: zpool.Tool, CacheFile: filepath.Join(t.TempDir(), "absent.cache")}
	if d, err := c.Read(context.Background()); err != nil || d.CacheFile != "" {
		t.Fatalf("absent cache file: %+v %v", d, err)
	}
}

// stderrOf is the stderr captured with a real output, "" when none was.
func stderrOf(t *testing.T, capture string) string {
	t.Helper()
	raw, err := os.ReadFile(captured + capture + ".stderr")
	if err != nil {
		return ""
	}
	return string(raw)
}

func TestZpoolImportHangIsATimeout(t *testing.T) {
	zpool := newAnswers(t, "zpool")
	zpool.answer("list -H -o name", fastOnlyListing(t), "", 0)
	zpool.answer("import", "HANG", "", 0)
	c := &ZpoolImport{Runner: execx.New(300 * time.Millisecond), Zpool: zpool.Tool}
	start := time.Now()
	_, err := c.Read(context.Background())
	if execx.KindOf(err) != execx.KindTimeout || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

// fastOnlyListing is `zpool list -H -o name` once vault is exported: the
// real healthy listing without vault's line (DERIVED).
func fastOnlyListing(t *testing.T) string {
	t.Helper()
	path := importedListing(t, "a.zpool-list-H-o.txt")
	raw, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(raw), "vault\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
