package zfs

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/zpool-status-golden")

// repoTestdata is the repository's shared testdata directory.
const repoTestdata = "../../testdata"

// goldenDir holds one <relative-path>.golden.json per status fixture.
var goldenDir = filepath.Join(repoTestdata, "zpool-status-golden")

// fixtureLoc is the zone status fixtures are read in. Fixtures come from
// many hosts whose zones are unknown, so goldens are pinned to UTC.
var fixtureLoc = time.UTC

// statusFixture is a zpool status capture found under testdata.
type statusFixture struct {
	rel  string // path relative to testdata, used for the golden name
	path string
	json bool
}

// statusFixtures lists every file whose name shows it is zpool status
// output: all of testdata/zpool-status/ and, under testdata/captured/*/,
// files named like "zpool-status*" or "*status*.txt|json".
func statusFixtures(t testing.TB) []statusFixture {
	t.Helper()
	var out []statusFixture
	add := func(path string) {
		rel, err := filepath.Rel(repoTestdata, path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, statusFixture{rel: rel, path: path, json: isJSONName(path)})
	}
	walk := func(root string, keep func(string) bool) {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return filepath.SkipDir
				}
				return err
			}
			if !d.IsDir() && keep(path) {
				add(path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(filepath.Join(repoTestdata, "zpool-status"), func(p string) bool {
		b := filepath.Base(p)
		return !strings.EqualFold(b, "SOURCES.md") && !strings.HasSuffix(b, ".md")
	})
	walk(filepath.Join(repoTestdata, "captured"), isStatusCaptureName)
	return out
}

// isStatusCaptureName matches capture names that say they hold zpool status.
func isStatusCaptureName(p string) bool {
	b := strings.ToLower(filepath.Base(p))
	if strings.HasSuffix(b, ".md") || strings.HasSuffix(b, ".sh") || strings.HasSuffix(b, ".stderr") {
		return false
	}
	return strings.Contains(b, "zpool-status") || strings.Contains(b, "zpool_status") ||
		strings.HasPrefix(b, "status")
}

func isJSONName(p string) bool {
	b := strings.ToLower(filepath.Base(p))
	return strings.HasSuffix(b, ".json") || strings.Contains(b, "-j.") || strings.Contains(b, "json")
}

// parseFixture parses one capture with the parser its name calls for.
func parseFixture(f statusFixture) ([]*Pool, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	if f.json {
		return ParseStatusJSON(bytes.NewReader(data))
	}
	return ParseStatusTextIn(bytes.NewReader(data), fixtureLoc)
}

func TestGoldenStatus(t *testing.T) {
	fixtures := statusFixtures(t)
	if len(fixtures) == 0 {
		t.Fatal("no zpool status fixtures found under testdata")
	}
	for _, f := range fixtures {
		t.Run(f.rel, func(t *testing.T) {
			pools, err := parseFixture(f)
			if err != nil {
				t.Fatalf("parse %s: %v", f.path, err)
			}
			got, err := json.MarshalIndent(pools, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join(goldenDir, f.rel+".golden.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("missing golden (run go test ./zfs -run Golden -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s; rerun with -update and review the diff\n%s", f.path, golden, firstDiff(string(want), string(got)))
			}
		})
	}
}

// firstDiff shows the first differing line, enough to find the change.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) && i < len(gl); i++ {
		if wl[i] != gl[i] {
			return "line " + itoa(i+1) + ":\n  want: " + wl[i] + "\n  got:  " + gl[i]
		}
	}
	return "lengths differ"
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
