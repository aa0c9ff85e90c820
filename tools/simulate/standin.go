package simulate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// workDir is the temporary directory one simulation runs in: the stand-in
// tools, the recordings laid out step by step, and the state directory.
type workDir struct {
	root     string
	zpool    string
	zfs      string
	smartctl string
	stateDir string
	devices  []string // smartctl devices, index = stand-in file number
	steps    int
}

// newWorkDir lays out sc's recordings under a new temporary directory in
// parent ("" = the system's). Each step directory holds the outputs the
// stand-ins print at that step; an output the recording has no capture of
// at a step (b3 has a zpool status but no zpool list) carries over from the
// step before, as the tool's answer would not have changed in between.
func newWorkDir(parent string, sc *Scenario) (*workDir, error) {
	root, err := os.MkdirTemp(parent, "zwatch-simulate-")
	if err != nil {
		return nil, fmt.Errorf("simulate: temporary directory: %w", err)
	}
	w := &workDir{root: root, devices: sc.Devices(), steps: len(sc.Steps)}
	if err := w.build(sc); err != nil {
		w.remove()
		return nil, err
	}
	return w, nil
}

func (w *workDir) remove() { _ = os.RemoveAll(w.root) }

// canRun checks that the stand-ins can be executed where they were written
// (a /tmp mounted noexec cannot run them).
func (w *workDir) canRun() error {
	err := exec.Command(w.zpool, "version").Run()
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) {
		return nil
	}
	return fmt.Errorf("simulate: cannot run the stand-in tools in %s (%v): is it mounted noexec? Set TMPDIR to a directory where programs may run", w.root, err)
}

func (w *workDir) build(sc *Scenario) error {
	bin := filepath.Join(w.root, "bin")
	w.stateDir = filepath.Join(w.root, "state")
	for _, d := range []string{bin, w.stateDir, filepath.Join(w.root, "served")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
	}
	if sc.UsesZFS() {
		if err := copyRecording(sc.ZpoolVersion, filepath.Join(w.root, "version.txt")); err != nil {
			return err
		}
	}
	var prev string
	for i, st := range sc.Steps {
		dir := w.stepDir(i)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		if st.ZFS != "" {
			for _, f := range zfsFiles {
				src := st.ZFS + f.suffix
				if f.name == "zpool-list-Hp.txt" && st.ZpoolList != "" {
					src = st.ZpoolList
				}
				if _, err := fs.Stat(recordings, path.Join("scenarios", src)); err != nil {
					if prev == "" {
						continue
					}
					if err := copyFile(filepath.Join(prev, f.name), filepath.Join(dir, f.name)); err != nil && !os.IsNotExist(err) {
						return err
					}
					continue
				}
				if err := copyRecording(src, filepath.Join(dir, f.name)); err != nil {
					return err
				}
			}
		}
		recorded := map[string]bool{}
		for _, r := range st.Smart {
			k := w.deviceIndex(r.Device)
			recorded[r.Device] = true
			data, err := fs.ReadFile(recordings, path.Join("scenarios", r.File))
			if err != nil {
				return fmt.Errorf("simulate: recording %s: %w", r.File, err)
			}
			rc, err := smartExit(data)
			if err != nil {
				return fmt.Errorf("simulate: recording %s: %w", r.File, err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("smart-%d.json", k)), data, 0o600); err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("smart-%d.rc", k)), []byte(fmt.Sprint(rc)), 0o600); err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
		}
		for k, d := range w.devices {
			if recorded[d] || prev == "" {
				continue
			}
			for _, ext := range []string{".json", ".rc"} {
				name := fmt.Sprintf("smart-%d%s", k, ext)
				if err := copyFile(filepath.Join(prev, name), filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
		}
		prev = dir
	}
	if err := w.setStep(0); err != nil {
		return err
	}
	w.zpool = filepath.Join(bin, "zpool")
	w.zfs = filepath.Join(bin, "zfs")
	w.smartctl = filepath.Join(bin, "smartctl")
	scripts := map[string]string{
		w.zpool: w.script("zpool", []standInCase{
			{"version", "$w/version.txt", ""},
			{"list -Hp", "$d/zpool-list-Hp.txt", "zpool-list"},
			{"status -j --json-int -p -P", "$d/zpool-status-j.json", "zpool-status"},
		}),
		w.zfs: w.script("zfs", []standInCase{
			// zpool_list asks for the pools' root datasets by name; the
			// recording holds every dataset, the roots among them.
			{"list -Hp -o name,used,avail,quota,refquota *", "$d/zfs-list-Hp.txt", "zfs-list"},
		}),
		w.smartctl: w.smartScript(),
	}
	for p, text := range scripts {
		if err := os.WriteFile(p, []byte(text), 0o700); err != nil {
			return fmt.Errorf("simulate: stand-in %s: %w", p, err)
		}
	}
	return nil
}

func (w *workDir) stepDir(i int) string {
	return filepath.Join(w.root, "steps", fmt.Sprintf("%02d", i))
}

func (w *workDir) deviceIndex(dev string) int {
	for i, d := range w.devices {
		if d == dev {
			return i
		}
	}
	return -1
}

// setStep makes the stand-ins replay step i from now on.
func (w *workDir) setStep(i int) error {
	p := filepath.Join(w.root, "step")
	if err := os.WriteFile(p+".tmp", []byte(fmt.Sprintf("%02d", i)), 0o600); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	return nil
}

// served reports whether every recording of step i the collectors read has
// been replayed at least once since the step began.
func (w *workDir) served(i int, sc *Scenario) bool {
	var keys []string
	if sc.Steps[i].ZFS != "" {
		keys = append(keys, "zpool-status", "zpool-list")
	}
	for k := range w.devices {
		keys = append(keys, fmt.Sprintf("smart-%d", k))
	}
	for _, k := range keys {
		if _, err := os.Stat(filepath.Join(w.root, "served", fmt.Sprintf("%02d.%s", i, k))); err != nil {
			return false
		}
	}
	return true
}

// waitServed waits until step i has been read by every collector, or until
// limit passes; it reports whether it was.
func (w *workDir) waitServed(i int, sc *Scenario, limit time.Duration, done <-chan struct{}) bool {
	deadline := time.Now().Add(limit)
	for !w.served(i, sc) {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-done:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

type standInCase struct{ argv, file, served string }

// script is a stand-in for tool that prints the current step's recording
// for the argument lists the collectors use, and refuses everything else:
// it can never change anything, and never runs the real tool.
func (w *workDir) script(tool string, cases []standInCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/sh
# zwatch simulate: stand-in for %[1]s. It replays recorded outputs and never
# runs the real %[1]s.
w=%[2]s
s=$(cat "$w/step") || exit 70
d="$w/steps/$s"
k=
case "$*" in
`, tool, shQuote(w.root))
	for _, c := range cases {
		pattern := shQuote(c.argv)
		if argv, ok := strings.CutSuffix(c.argv, " *"); ok {
			pattern = shQuote(argv+" ") + "*" // any arguments after these
		}
		fmt.Fprintf(&b, "%s) f=\"%s\"; k=%s ;;\n", pattern, c.file, c.served)
	}
	fmt.Fprintf(&b, `*) echo "zwatch simulate: the stand-in %[1]s only replays recordings; it does not run: %[1]s $*" >&2; exit 2 ;;
esac
if [ ! -f "$f" ]; then echo "zwatch simulate: no recording of %[1]s $* at step $s" >&2; exit 1; fi
cat "$f" || exit 1
if [ -n "$k" ]; then : > "$w/served/$s.$k"; fi
exit 0
`, tool)
	return b.String()
}

// smartScript is the smartctl stand-in: `smartctl ... -a ... DEVICE` prints
// the recorded JSON of DEVICE at the current step and exits with the
// recorded exit status (a bit mask: non-zero is data, not failure).
func (w *workDir) smartScript() string {
	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/sh
# zwatch simulate: stand-in for smartctl. It replays recorded outputs and
# never runs the real smartctl.
w=%s
s=$(cat "$w/step") || exit 70
d="$w/steps/$s"
dev=
all=
for a in "$@"; do
  case "$a" in -a) all=1 ;; esac
  dev=$a
done
if [ -z "$all" ]; then echo "zwatch simulate: the stand-in smartctl only replays recorded 'smartctl -a' outputs; it does not run: smartctl $*" >&2; exit 1; fi
case "$dev" in
`, shQuote(w.root))
	for k, d := range w.devices {
		fmt.Fprintf(&b, "%s) k=%d ;;\n", shQuote(d), k)
	}
	b.WriteString(`*) echo "zwatch simulate: no recording of $dev" >&2; exit 2 ;;
esac
if [ ! -f "$d/smart-$k.json" ]; then echo "zwatch simulate: no recording of $dev at step $s" >&2; exit 2; fi
cat "$d/smart-$k.json" || exit 2
: > "$w/served/$s.smart-$k"
exit $(cat "$d/smart-$k.rc")
`)
	return b.String()
}

// shQuote quotes s for the shell.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func copyRecording(rel, dst string) error {
	data, err := fs.ReadFile(recordings, path.Join("scenarios", rel))
	if err != nil {
		return fmt.Errorf("simulate: recording %s: %w", rel, err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	return nil
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}
