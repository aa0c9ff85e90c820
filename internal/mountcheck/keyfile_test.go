package mountcheck

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zwatch/zwatch/facts"
)

// hexKey is 64 hex digits, as `openssl rand -hex 32` writes them.
const hexKey = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

func writeKey(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return p
}

func TestKeyFileAsLibzfsReadsIt(t *testing.T) {
	raw32 := strings.Repeat("k", 32)
	for _, tc := range []struct {
		name, content, format string
		mode                  os.FileMode
		problem, detail       string
	}{
		{"raw 32 bytes", raw32, "raw", 0o600, "", ""},
		// dd if=/dev/urandom bs=32 count=1 may yield newline bytes: they count.
		{"raw with newlines inside", "\n" + strings.Repeat("k", 30) + "\n", "raw", 0o600, "", ""},
		{"raw with a trailing newline", raw32 + "\n", "raw", 0o600, facts.KeyFileWrongSize, "is 33 bytes; keyformat=raw needs exactly 32"},
		{"raw too short", "short", "raw", 0o400, facts.KeyFileWrongSize, "is 5 bytes"},
		{"raw empty", "", "raw", 0o600, facts.KeyFileEmpty, "empty"},
		{"hex with newline", hexKey + "\n", "hex", 0o600, "", ""},
		{"hex without newline", strings.ToUpper(hexKey), "hex", 0o600, "", ""},
		{"hex second line ignored", hexKey + "\nnotes\n", "hex", 0o600, "", ""},
		{"hex windows line ending", hexKey + "\r\n", "hex", 0o600, facts.KeyFileWrongSize, "carriage return"},
		{"hex short", hexKey[:40] + "\n", "hex", 0o600, facts.KeyFileWrongSize, "40 characters"},
		{"hex bad digit", "g" + hexKey[1:], "hex", 0o600, facts.KeyFileWrongSize, `character 1 of its first line is 'g'`},
		{"hex empty first line", "\n" + hexKey, "hex", 0o600, facts.KeyFileEmpty, "first line is empty"},
		{"passphrase", "correct horse\n", "passphrase", 0o600, "", ""},
		{"passphrase empty line", "\n", "passphrase", 0o600, facts.KeyFileEmpty, "no passphrase"},
		{"exposed", raw32, "raw", 0o644, facts.KeyFileExposed, "mode 0644"},
		{"group readable", hexKey, "hex", 0o640, facts.KeyFileExposed, "chmod 600"},
		{"wrong size and exposed", "x", "raw", 0o604, facts.KeyFileWrongSize, "also, mode 0604"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeKey(t, tc.content, tc.mode)
			got := KeyFile(p, tc.format)
			if got.Problem != tc.problem || !strings.Contains(got.Detail, tc.detail) {
				t.Fatalf("KeyFile = %+v, want problem %q with %q", got, tc.problem, tc.detail)
			}
			if got.Path != p || got.Mode == "" {
				t.Fatalf("path/mode %+v", got)
			}
		})
	}
}

func TestKeyFileMissingUnreadableAndOdd(t *testing.T) {
	dir := t.TempDir()
	if got := KeyFile(filepath.Join(dir, "gone.key"), "raw"); got.Problem != facts.KeyFileMissing {
		t.Fatalf("missing: %+v", got)
	}
	if got := KeyFile(dir, "hex"); got.Problem != facts.KeyFileUnreadable || !strings.Contains(got.Detail, "directory") {
		t.Fatalf("directory: %+v", got)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := KeyFile(fifo, "raw"); got.Problem != facts.KeyFileUnreadable || !strings.Contains(got.Detail, "named pipe") {
		t.Fatalf("fifo: %+v", got)
	}
	// zfs follows a link to the key, and so does the check.
	target := writeKey(t, hexKey, 0o600)
	link := filepath.Join(dir, "link.key")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if got := KeyFile(link, "hex"); got.Problem != "" || got.SizeBytes != 64 || got.Mode != "0600" {
		t.Fatalf("link to a good key: %+v", got)
	}
	dangling := filepath.Join(dir, "dangling.key")
	if err := os.Symlink(filepath.Join(dir, "nothing"), dangling); err != nil {
		t.Fatal(err)
	}
	if got := KeyFile(dangling, "hex"); got.Problem != facts.KeyFileMissing {
		t.Fatalf("dangling link: %+v", got)
	}
	// A big file is read only up to the bound.
	big := writeKey(t, strings.Repeat("a", 1<<20), 0o600)
	if got := KeyFile(big, "raw"); got.Problem != facts.KeyFileWrongSize || !strings.Contains(got.Detail, "1048576 bytes") {
		t.Fatalf("big raw: %+v", got)
	}
}
