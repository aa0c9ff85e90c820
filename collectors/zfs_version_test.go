package collectors

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zwatch/zwatch/internal/execx"
)

// A release without -j (2.1.11, real output): -j is refused once, the text
// form answers, and -j is not asked again.
func TestZFSVersionFallsBackToTextOnce(t *testing.T) {
	out, err := os.ReadFile("../testdata/captured/zfs-2.1.11/a.version.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := &argvRunner{answers: map[string]execx.Result{"version": {Stdout: out}}}
	c := &ZFSVersion{Runner: r, Zfs: "zfs"}
	for range 2 {
		d, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if d.Userland != "zfs-2.1.11-1+deb12u1" || d.Kernel != "zfs-kmod-2.1.11-1+deb12u1" || d.Source != "zfs version" {
			t.Errorf("got %+v", d)
		}
	}
	if len(r.calls) != 3 || r.calls[0] != "version -j" || r.calls[2] != "version" {
		t.Errorf("calls = %q, want -j once then text twice", r.calls)
	}
}

// 2.3+ answers -j (real output, capture step l0).
func TestZFSVersionJSON(t *testing.T) {
	out, err := os.ReadFile("../testdata/captured/zfs-2.3.2/l0-version.zfs-version-j.json")
	if err != nil {
		t.Fatal(err)
	}
	r := &argvRunner{answers: map[string]execx.Result{"version -j": {Stdout: out}}}
	d, err := (&ZFSVersion{Runner: r, Zfs: "zfs"}).Read(context.Background())
	if err != nil || d.Userland != "zfs-2.3.2-2~bpo12+2" || d.Kernel != "zfs-kmod-2.3.2-2~bpo12+2" || d.Source != "zfs version -j" {
		t.Errorf("got %+v, %v", d, err)
	}
	if len(r.calls) != 1 {
		t.Errorf("calls = %q", r.calls)
	}
}

// No zfs version subcommand (0.7) and no userland line: the module file
// says which module is loaded.
func TestZFSVersionModuleFile(t *testing.T) {
	r := &argvRunner{answers: map[string]execx.Result{}}
	c := &ZFSVersion{Runner: r, Zfs: "zfs", ModuleFile: "../testdata/zfs-version/openzfs-10498-sys-module-zfs-version.txt"}
	d, err := c.Read(context.Background())
	if err != nil || d.Kernel != "zfs-kmod-0.8.3-1~bpo10+1" || d.Userland != "" || d.Source != "sysfs" {
		t.Errorf("got %+v, %v", d, err)
	}
	// Neither the tool nor the file: not available here, said once.
	c = &ZFSVersion{Runner: r, Zfs: "zfs", ModuleFile: filepath.Join(t.TempDir(), "version")}
	r.answers = map[string]execx.Result{"version": {Stdout: []byte("usage: zfs command args ...\n"), ExitCode: 2}}
	if _, err := c.Read(context.Background()); err == nil {
		t.Error("no version and no error")
	} else if errors.Is(err, ErrNotAvailable) {
		t.Errorf("usage text is a failure to report, not an absent source: %v", err)
	}
}
