package input

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/internal/testutil"
)

func TestReadRefusesWhatIsNoSavedOutput(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: a 65 MiB file costs no disk.
	if err := f.Truncate(MaxToolOutput + 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{
		dir:                           "is a directory",
		"/dev/zero":                   "is a device",
		big:                           "larger than 64 MiB",
		filepath.Join(dir, "missing"): "no such file",
	} {
		if _, err := Read(path, MaxToolOutput); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("Read(%s) = %v, want an error naming it and %q", path, err, want)
		}
	}
}

func TestFromIsBounded(t *testing.T) {
	// Endless input (stdin from /dev/zero) stops at the limit.
	if _, err := From("stdin", testutil.Zeros{}, 1<<20); err == nil || !strings.Contains(err.Error(), "stdin: larger than 1 MiB") {
		t.Errorf("endless input: %v", err)
	}
	b, err := From("x", io.LimitReader(testutil.Zeros{}, 1<<20), 1<<20)
	if err != nil || len(b) != 1<<20 {
		t.Errorf("exactly the limit: %d bytes, %v", len(b), err)
	}
}

func TestReadPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString("pool: tank\n"); w.Close() }()
	path := "/proc/self/fd/" + strconv.Itoa(int(r.Fd()))
	b, err := Read(path, MaxToolOutput)
	if err != nil || string(b) != "pool: tank\n" {
		t.Errorf("pipe: %q %v", b, err)
	}
	r.Close()
}
