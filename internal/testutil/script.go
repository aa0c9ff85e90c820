package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteScript writes script as an executable file named name in dir (a
// stand-in for a tool such as zpool or smartctl) and returns its path.
func WriteScript(t testing.TB, dir, name, script string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// PrependPath puts dir first on PATH until the test ends, so that stand-ins
// written there are found before the real tools.
func PrependPath(t testing.TB, dir string) {
	t.Helper()
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// Zeros is endless input, like /dev/zero: for proving that a reader stops
// at its bound.
type Zeros struct{}

// Read fills p with zero bytes.
func (Zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
