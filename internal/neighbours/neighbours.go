// Package neighbours finds the other programs on this machine that already
// tell a person about the faults zwatch pages for: ZED (the ZFS event
// daemon, which mails and pushes on pool events) and smartd (which mails on
// SMART problems). With either one notifying too, one failing disk sends two
// messages; `zwatch run` says so once at start, with the change that keeps
// one (docs/zed-smartd.md).
//
// Everything is read, never run: zed.rc is parsed as text (it is a shell
// file, but executing it is not ours to do), smartd.conf likewise, and
// whether the daemons run is read from /proc/*/comm. Every read is bounded,
// so the check costs a few milliseconds and cannot hang the start.
package neighbours

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/zwatch/zwatch/internal/input"
)

// Bounds on what is read: real files are a few KiB, real zed.d folders a
// dozen or two entries, a NAS a few hundred processes.
const (
	maxConfBytes = 256 << 10
	maxDirNames  = 1024
	maxProcs     = 1 << 16
	maxCommBytes = 64
	maxLinkHops  = 8
)

// Report is what Detect found.
type Report struct {
	// ZED is nil when zed.rc is not there (ZED not installed).
	ZED *ZED
	// Smartd has one entry per smartd.conf found (Debian's path, and the
	// one Fedora and RHEL use), nil when none.
	Smartd []*Smartd
	// Problems are files that exist but could not be read: the check said
	// nothing about them.
	Problems []error
}

// Detect looks under root ("/" on a real machine; a fixture tree in tests)
// for ZED's and smartd's configuration and whether they run.
func Detect(root string) Report {
	if root == "" {
		root = "/"
	}
	fs := sysFS{root: root}
	procs := fs.running("zed", "smartd")
	var r Report
	z, err := detectZED(fs, procs["zed"])
	r.ZED = z
	r.addProblem(err)
	for _, p := range SmartdConfPaths {
		s, err := detectSmartd(fs, p, procs["smartd"])
		r.addProblem(err)
		if s != nil {
			r.Smartd = append(r.Smartd, s)
		}
	}
	return r
}

func (r *Report) addProblem(err error) {
	if err != nil {
		r.Problems = append(r.Problems, err)
	}
}

// Advice is one program that notifies too, in words: what it does and how
// to keep one notification per fault.
type Advice struct {
	Program string // zed or smartd
	Config  string // the file to change
	Running bool
	Message string
}

// Advice says, for each program that notifies a person about what zwatch
// also pages for, what to change. zwatchSelfTests tells whether zwatch's
// own maintenance starts SMART self-tests, so that a smartd schedule that
// starts them too is pointed out.
func (r Report) Advice(zwatchSelfTests bool) []Advice {
	var out []Advice
	if r.ZED != nil && r.ZED.Notifies() {
		out = append(out, Advice{Program: "zed", Config: r.ZED.Path, Running: r.ZED.Running, Message: r.ZED.advice()})
	}
	for _, s := range r.Smartd {
		if msg := s.advice(zwatchSelfTests); msg != "" {
			out = append(out, Advice{Program: "smartd", Config: s.Path, Running: s.Running, Message: msg})
		}
	}
	return out
}

// DocLink is where the choice is explained.
const DocLink = "docs/zed-smartd.md"

// sysFS reads a system's files under root, resolving symbolic links inside
// root: Debian's zedlets are absolute links into /usr/lib/zfs-linux, which
// must land in the fixture tree in tests, not on the test machine.
type sysFS struct{ root string }

// host turns a path of the machine (/etc/smartd.conf) into one here.
func (f sysFS) host(p string) string { return filepath.Join(f.root, filepath.FromSlash(p)) }

// resolve follows the links of the machine path p, within root, to the
// machine path of what it points to.
func (f sysFS) resolve(p string) (string, os.FileInfo, error) {
	for range maxLinkHops {
		st, err := os.Lstat(f.host(p))
		if err != nil {
			return p, nil, err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			return p, st, nil
		}
		target, err := os.Readlink(f.host(p))
		if err != nil {
			return p, nil, err
		}
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		p = path.Clean(target)
	}
	return p, nil, fmt.Errorf("%s: more than %d symbolic links", p, maxLinkHops)
}

// readConf reads a configuration file of the machine: nil, nil when it is
// not there; only a regular file (a FIFO would block), at most
// maxConfBytes.
func (f sysFS) readConf(p string) ([]byte, error) {
	real, st, err := f.resolve(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file", p)
	}
	b, err := input.ReadRegular(f.host(real), maxConfBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return b, nil
}

// executable reports whether the machine path p is (or links to) a regular
// file its owner may run.
func (f sysFS) executable(p string) bool {
	_, st, err := f.resolve(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o100 != 0
}

// names lists the entries of the machine directory p, at most maxDirNames.
func (f sysFS) names(p string) ([]string, error) {
	d, err := os.Open(f.host(p))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(maxDirNames)
	if err == io.EOF {
		err = nil
	}
	return names, err
}

// running reports which of the named programs have a process, from the
// kernel's short names in /proc/PID/comm.
func (f sysFS) running(programs ...string) map[string]bool {
	want := map[string]bool{}
	for _, p := range programs {
		want[p] = true
	}
	found := map[string]bool{}
	d, err := os.Open(f.host("/proc"))
	if err != nil {
		return found
	}
	defer d.Close()
	seen := 0
	for seen < maxProcs && len(found) < len(want) {
		batch, err := d.Readdirnames(1024)
		for _, pid := range batch {
			if pid == "" || strings.Trim(pid, "0123456789") != "" {
				continue
			}
			seen++
			if c := f.comm(pid); want[c] {
				found[c] = true
			}
		}
		if err != nil {
			break
		}
	}
	return found
}

func (f sysFS) comm(pid string) string {
	c, err := os.Open(f.host("/proc/" + pid + "/comm"))
	if err != nil {
		return ""
	}
	defer c.Close()
	b, _ := io.ReadAll(io.LimitReader(c, maxCommBytes))
	return strings.TrimSpace(string(b))
}
