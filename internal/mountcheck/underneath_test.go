package mountcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/zwatch/zwatch/facts"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestUnderneathCountsWhatWasWritten(t *testing.T) {
	mp := t.TempDir()
	write(t, filepath.Join(mp, "DCIM/100/img1.jpg"), strings.Repeat("x", 1000))
	write(t, filepath.Join(mp, "DCIM/100/img2.jpg"), strings.Repeat("y", 24))
	write(t, filepath.Join(mp, "backup.tar"), "12345")
	// Empty directories (a child dataset's mountpoint) are not data.
	if err := os.MkdirAll(filepath.Join(mp, "child/grandchild"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := Underneath(mp, 0)
	if got.Error != "" || got.Truncated || got.Files != 3 || got.Bytes != 1029 || len(got.Examples) != 3 {
		t.Fatalf("Underneath = %+v", got)
	}
	if !slices.Contains(got.Examples, "backup.tar") || !slices.Contains(got.Examples, "DCIM/100/img1.jpg") {
		t.Fatalf("examples %v", got.Examples)
	}
	empty := t.TempDir()
	if got := Underneath(empty, 0); got.Files != 0 || got.Error != "" {
		t.Fatalf("empty dir: %+v", got)
	}
	if got := Underneath(filepath.Join(empty, "never-created"), 0); got.Files != 0 || got.Error != "" {
		t.Fatalf("absent mountpoint: %+v", got)
	}
}

func TestUnderneathNeverFollowsSymlinks(t *testing.T) {
	outside := t.TempDir()
	for i := range 50 {
		write(t, filepath.Join(outside, "secret", fmt.Sprintf("s%02d", i)), "data")
	}
	mp := t.TempDir()
	write(t, filepath.Join(mp, "note.txt"), "hi")
	if err := os.Symlink(outside, filepath.Join(mp, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(mp, "root")); err != nil {
		t.Fatal(err)
	}
	got := Underneath(mp, 0)
	// The two links are files in the directory; what they point at is not walked.
	if got.Error != "" || got.Files != 3 || got.Bytes != 2 {
		t.Fatalf("Underneath = %+v", got)
	}
	// A mountpoint that is itself a link is reported, not followed.
	link := filepath.Join(t.TempDir(), "mnt")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	got = Underneath(link, 0)
	if got.Files != 0 || !strings.Contains(got.Error, "symbolic link") || !strings.Contains(got.Error, outside) {
		t.Fatalf("mountpoint link: %+v", got)
	}
	file := filepath.Join(t.TempDir(), "plain")
	write(t, file, "x")
	if got := Underneath(file, 0); !strings.Contains(got.Error, "not a directory") {
		t.Fatalf("mountpoint is a file: %+v", got)
	}
}

func TestUnderneathStopsAtItsBound(t *testing.T) {
	mp := t.TempDir()
	for i := range 120 {
		write(t, filepath.Join(mp, "d", fmt.Sprintf("f%03d", i)), "ab")
	}
	got := Underneath(mp, 100)
	if !got.Truncated || got.Files > 100 || got.Files < 90 || got.Error != "" {
		t.Fatalf("Underneath bound 100 = %+v", got)
	}
	// Depth is bounded too.
	deep := t.TempDir()
	p := deep
	for range maxDepth + 5 {
		p = filepath.Join(p, "d")
	}
	write(t, filepath.Join(p, "f"), "x")
	if got := Underneath(deep, 0); !got.Truncated || got.Files != 0 {
		t.Fatalf("deep tree: %+v", got)
	}
}

// A child dataset mounted below the unmounted one is another filesystem:
// its files were not written to the disk below.
func TestUnderneathSkipsOtherFilesystems(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	mp := t.TempDir()
	write(t, filepath.Join(mp, "stray.txt"), "123")
	child := filepath.Join(mp, "child")
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "zwatch-test", child).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", child).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", child, err, out)
		}
	})
	write(t, filepath.Join(child, "in-the-child-dataset.jpg"), strings.Repeat("z", 5000))
	got := Underneath(mp, 0)
	if got.Error != "" || got.Files != 1 || got.Bytes != 3 || got.Examples[0] != "stray.txt" {
		t.Fatalf("Underneath = %+v", got)
	}
}

// helperEnv names the directory the helper process looks at.
const helperEnv = "MOUNTCHECK_UNDERNEATH_HELPER"

// TestUnderneathHelper is not a test: run as another user by
// TestUnderneathUnreadable, it prints Underneath of $MOUNTCHECK_UNDERNEATH_HELPER.
func TestUnderneathHelper(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	_ = json.NewEncoder(os.Stdout).Encode(Underneath(dir, 0))
}

// An unreadable directory is an error, never "empty". Root reads every
// directory, so as root the check runs in a copy of this test binary as
// nobody.
func TestUnderneathUnreadable(t *testing.T) {
	base, err := os.MkdirTemp("", "mountcheck-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.Chmod(filepath.Join(base, "mp", "locked"), 0o755)
		_ = os.Chmod(filepath.Join(base, "closed"), 0o755)
		os.RemoveAll(base)
	})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(base, "mp")
	write(t, filepath.Join(mp, "a.txt"), "a")
	write(t, filepath.Join(mp, "locked", "hidden.txt"), "h")
	if err := os.Chmod(filepath.Join(mp, "locked"), 0o700); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(base, "closed")
	write(t, filepath.Join(closed, "x"), "x")
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	check := func(dir string) facts.DirContents { return Underneath(dir, 0) }
	if os.Geteuid() == 0 {
		check = func(dir string) facts.DirContents { return asNobody(t, base, dir) }
	} else {
		for _, d := range []string{filepath.Join(mp, "locked"), closed} {
			if err := os.Chmod(d, 0o000); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := check(mp)
	if !strings.Contains(got.Error, "locked") || !strings.Contains(got.Error, "permission denied") {
		t.Fatalf("unreadable subdirectory: %+v", got)
	}
	got = check(closed)
	if got.Files != 0 || !strings.Contains(got.Error, "permission denied") {
		t.Fatalf("unreadable mountpoint: %+v", got)
	}
}

// asNobody runs TestUnderneathHelper on dir in a copy of the test binary
// as the user nobody (65534), kept in base (readable by all).
func asNobody(t *testing.T, base, dir string) facts.DirContents {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "mountcheck.test")
	if _, err := os.Stat(bin); err != nil {
		copyFile(t, self, bin)
	}
	cmd := exec.Command(bin, "-test.run=^TestUnderneathHelper$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("cannot run a helper as nobody: %v", err)
	}
	var dc facts.DirContents
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &dc); err != nil {
		t.Fatalf("helper said %q: %v", out, err)
	}
	return dc
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
