package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
)

// liveStandIns writes stand-in zpool, zfs and smartctl that answer the
// collectors' commands with real recorded outputs (the healthy scrubbed
// pool of the 2.3.2 capture and its SSD's SMART report), and a config
// naming them. smartctl is given by path; "" leaves it out of the config's
// reach (missing).
func liveStandIns(t *testing.T, smartctl bool) string {
	t.Helper()
	dir := t.TempDir()
	abs := func(f string) string {
		p, err := filepath.Abs(captured + f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	zpool := testutil.WriteScript(t, dir, "zpool", fmt.Sprintf(`#!/bin/sh
case "$*" in
"status -j --json-int -p -P") cat %q ;;
"list -Hp") cat %q ;;
*) echo "stand-in zpool: unexpected argv: $*" >&2; exit 2 ;;
esac
`, abs("j3-scrubbed.zpool-status-j.json"), abs("j3-scrubbed.zpool-list-Hp.txt")))
	// No datasets or snapshots listed: the captured pool's are not part
	// of this recording.
	zfs := testutil.WriteScript(t, dir, "zfs", fmt.Sprintf(`#!/bin/sh
case "$*" in
"list -Hp "*) ;;
"version -j") cat %q ;;
*) echo "stand-in zfs: unexpected argv: $*" >&2; exit 2 ;;
esac
`, abs("l0-version.zfs-version-j.json")))
	smart := testutil.WriteScript(t, dir, "smartctl", fmt.Sprintf(`#!/bin/sh
case "$*" in
*" /dev/sdz") cat %q ;;
*) echo "stand-in smartctl: unexpected argv: $*" >&2; exit 2 ;;
esac
`, abs("a.smartctl-a-json-ata-ssd.json")))
	if !smartctl {
		smart = filepath.Join(dir, "no-smartctl-here")
	}
	return fmt.Sprintf("host: nas1\nzfs:\n  zpool: %s\n  zfs: %s\nsmart:\n  smartctl: %s\n  devices:\n    - device: /dev/sdz\n", zpool, zfs, smart)
}

// A live check reads through the daemon's own collectors: zpool status and
// list, zfs, smartctl (stand-ins answering with real recorded outputs).
func TestCheckLiveThroughTheCollectors(t *testing.T) {
	po, r := checkRun(t, liveStandIns(t, true), checkOptions{timeout: "20"})
	if r.State != stateOK || po.Text != "1 pool ONLINE (tank), 1 disk checked, no alerts" {
		t.Fatalf("%s - %s\n%s", po.State, po.Text, strings.Join(po.Long, "\n"))
	}
	wantPerf(t, po, "tank_capacity", "10%;80;90;0;100")
	wantPerf(t, po, "tank_scrub_age", "71458s;3024000;;0;")
	wantPerf(t, po, "S3Z9NB0K000003_temperature", "31;54;59;;")

	// Without smartctl the daemon has a blind spot, and so has the check.
	po, r = checkRun(t, liveStandIns(t, false), checkOptions{timeout: "20"})
	if r.State != stateWarning || po.Text != "nas1: monitoring blind spot — smart is not running" {
		t.Fatalf("%s - %s\n%s", po.State, po.Text, strings.Join(po.Long, "\n"))
	}
	if _, ok := po.perf("tank_capacity"); !ok {
		t.Error("the pools' performance data went missing with smartctl")
	}
}

// A zpool that hangs while the kernel's kstat says a pool is SUSPENDED
// (real captured kstat files) is what the daemon pages at once: CRITICAL,
// not UNKNOWN.
func TestCheckHungZpoolWithSuspendedPool(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kstat files are Linux's")
	}
	dir := t.TempDir()
	zpool := testutil.WriteScript(t, dir, "zpool", "#!/bin/sh\nexec sleep 30\n")
	cfg := fmt.Sprintf("host: nas1\nzfs:\n  zpool: %s\nsmart:\n  enabled: false\n", zpool)
	po, r := checkRun(t, cfg, checkOptions{timeout: "2", live: liveSources{kstatRoot: "../../testdata/kstat/zfs-2.3.2/suspended"}})
	if r.State != stateCritical || !strings.HasPrefix(po.Text, "pool hung is SUSPENDED") ||
		!strings.HasSuffix(po.Text, "; zpool status did not answer within 2s") {
		t.Fatalf("%s - %s\n%s", po.State, po.Text, strings.Join(po.Long, "\n"))
	}
}

// buildZwatch builds the command into a temporary directory.
func buildZwatch(t *testing.T) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("no go tool to build zwatch with")
		}
	}
	bin := filepath.Join(t.TempDir(), "zwatch")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBinary runs the built zwatch and measures how long it took.
func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int, wall time.Duration) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	wall = time.Since(start)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code, wall
}

// The built binary with a zpool that never answers: UNKNOWN, exit 3,
// within the -t bound, never a hang. Once killed at the bound (a zpool
// waiting on a pool), and once holding its output open past the kill (a
// helper it forked out of its process group, as a zpool stuck in the
// kernel keeps the pipe): the watchdog answers then.
func TestCheckBinaryHungZpoolIsUnknownWithinTimeout(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	bin := buildZwatch(t)
	for _, c := range []struct{ name, script string }{
		{"killed at the bound", "#!/bin/sh\nexec sleep 30\n"},
		{"pipe held past the kill", "#!/bin/sh\nsetsid sleep 5 &\necho $! > \"$(dirname \"$0\")/helper.pid\"\nexec sleep 30\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			zpool := testutil.WriteScript(t, dir, "zpool", c.script)
			t.Cleanup(func() { stopHelper(t, filepath.Join(dir, "helper.pid")) })
			cfg := writeConfig(t, fmt.Sprintf("zfs:\n  zpool: %s\nsmart:\n  enabled: false\n", zpool))
			out, errOut, code, wall := runBinary(t, bin, "-c", cfg, "check", "-t", "3")
			if code != 3 || out != "ZWATCH UNKNOWN - zpool status did not answer within 3s\n" || errOut != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			// The bound counts from the process's start; the check answers
			// half a second before it. The slack is for a test run at nice
			// 19 beside a loaded machine, where waking up takes that long.
			if wall > 3*time.Second+time.Second || wall < 2*time.Second {
				t.Fatalf("answered after %s with -t 3", wall)
			}
			t.Logf("answered in %s", wall.Round(time.Millisecond))
		})
	}
}

// stopHelper ends the helper a stand-in left behind, by the id it wrote.
func stopHelper(t *testing.T, pidFile string) {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	t.Errorf("helper %d still runs", pid)
}
