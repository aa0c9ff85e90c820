package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
)

// runMainEnv makes the test binary act as zwatch itself (TestMain), so that
// hostile input is fed to a real process whose peak memory the kernel
// measures and whose crash cannot take the test down.
const runMainEnv = "ZWATCH_TEST_RUN_MAIN"

// peakFileEnv names the file where the child writes its peak resident
// memory (VmHWM): the kernel's rusage of a child also counts the parent's
// memory it was forked from, so only the child itself can tell.
const peakFileEnv = "ZWATCH_TEST_PEAK_FILE"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		g := &globals{stdout: os.Stdout, stderr: os.Stderr}
		code := execute(context.Background(), g, os.Args[1:])
		if f := os.Getenv(peakFileEnv); f != "" {
			if st, err := os.ReadFile("/proc/self/status"); err == nil {
				_ = os.WriteFile(f, st, 0o600)
			}
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// vmHWM reads the peak resident set size from a /proc/PID/status copy.
func vmHWM(status string) int64 {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb << 10
		}
	}
	return -1
}

// Bounds every hostile input must stay within. Memory: the 64 MiB input
// limit, the input held while it is parsed, and the garbage collector's
// headroom over that (GOGC=100); measured peaks are 20-240 MiB, the largest
// for 60 MiB of one pool's lines, against 3.8 GB before inputs were bounded.
// Time: the CPU a command spends is the bound, since wall time on a loaded
// 2-core CI machine measures the neighbours too; a command still running
// after hangAfter of wall time is killed and fails the test as a hang.
const (
	maxPeakRSS = 320 << 20
	maxCPU     = 10 * time.Second
	hangAfter  = 60 * time.Second
)

type hostileInput struct {
	name string
	// stdin is what the command reads; when nil, data() is.
	stdin io.Reader
	data  func() []byte
	// statusLike inputs read as a pool (garbage names, huge counters):
	// status must then find a problem, and rules eval may fire alerts.
	statusLike bool
}

func fixed(b []byte) func() []byte { return func() []byte { return b } }

// hostileInputs are endless, binary, invalid UTF-8, deeply nested and
// huge-number inputs, each for every command that reads one.
func hostileInputs() []hostileInput {
	digits := strings.Repeat("9", 1_000_000)
	return []hostileInput{
		{name: "endless zeros", stdin: testutil.Zeros{}},
		{name: "8 MiB of random bytes", data: func() []byte {
			rng := rand.New(rand.NewPCG(1, 2))
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			return b
		}},
		{name: "invalid UTF-8", statusLike: true, data: fixed([]byte(strings.Repeat("  pool: \xff\xfe\n state: ONLINE\xc3\x28\nconfig:\n\tNAME STATE\n\t\xff\xfe ONLINE 0 0 0\n", 20000)))},
		{name: "1e6 [", data: fixed([]byte(strings.Repeat("[", 1_000_000)))},
		{name: "1e6 [ in an object", data: fixed([]byte(`{"pools":` + strings.Repeat("[", 1_000_000)))},
		{name: "2e5 nested objects", data: fixed([]byte(`{"smartctl":` + strings.Repeat(`{"a":`, 200_000)))},
		{name: "a million-digit number in JSON", data: fixed([]byte(`{"pools":{"t":{"name":"t","state":"ONLINE","error_count":` + digits + `}},"smartctl":{"exit_status":` + digits + `},"temperature":{"current":1e999999}}`))},
		{name: "a million-digit number in text", statusLike: true, data: fixed([]byte("  pool: t\n state: ONLINE\nconfig:\n\n\tNAME STATE READ WRITE CKSUM\n\tt ONLINE " + digits + " 1e400 18446744073709551616\n\nerrors: " + digits + " data errors, use '-v' for a list\n"))},
		{name: "a million-digit number in YAML", data: fixed([]byte("pool: t\nlayout: mirror\nashift: " + digits + "\nzfs:\n  status_interval: " + digits + "h\n"))},
		{name: "30 MiB of short lines", data: func() []byte { return bytes.Repeat([]byte("x\n"), 15<<20) }},
		{name: "60 MiB of one pool's lines", statusLike: true, data: func() []byte {
			return append([]byte("  pool: t\n state: ONLINE\nerrors: Permanent errors have been detected in the following files:\n"), bytes.Repeat([]byte("\t/t/f\n"), 10<<20)...)
		}},
	}
}

// inputCommands are the commands that read a file or stdin, as run on
// stdin; check-config reads its FILE with open(2), so it gets /dev/stdin.
var inputCommands = [][]string{
	{"status", "--input", "-"},
	{"disks", "--input", "-"},
	{"rules", "eval", "-"},
	{"provision", "--plan", "-"},
	{"check-config", "/dev/stdin"},
	{"check", "--input", "-"},
}

// Each input-reading command, fed each hostile input, ends within seconds
// with a clear error that names the input, stays within bounded memory,
// and never panics.
func TestHostileInputToEveryCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs zwatch some fifty times")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range hostileInputs() {
		var data []byte
		if in.stdin == nil {
			data = in.data()
		}
		for _, args := range inputCommands {
			t.Run(in.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				res := runHostile(t, exe, args, in, data)
				switch {
				case in.statusLike && args[0] == "status" && res.code != exitFailure:
					t.Errorf("a garbage pool must be a problem (exit %d), got exit %d; stdout %.300q", exitFailure, res.code, res.stdout)
				case res.code == 0 && !(in.statusLike && args[0] == "rules"):
					t.Errorf("exit 0 for hostile input; stdout %.300q", res.stdout)
				}
				checkHostile(t, args, in, res)
			})
		}
	}
}

type hostileResult struct {
	code           int
	stdout, stderr string
	took, cpu      time.Duration
	peakRSS        int64
}

func runHostile(t *testing.T, exe string, args []string, in hostileInput, data []byte) hostileResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangAfter)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	peak := t.TempDir() + "/status"
	cmd.Env = append(os.Environ(), runMainEnv+"=1", peakFileEnv+"="+peak, "HOME="+t.TempDir())
	cmd.Dir = t.TempDir()
	if in.stdin != nil {
		cmd.Stdin = in.stdin
	} else {
		cmd.Stdin = bytes.NewReader(data)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := hostileResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		res.cpu = ps.UserTime() + ps.SystemTime()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("run %v: %v", args, err)
	}
	st, err := os.ReadFile(peak)
	if err != nil {
		t.Fatalf("%v wrote no peak memory (it did not end through main): %v\n%.2000s", args, err, res.stderr)
	}
	res.peakRSS = vmHWM(string(st))
	return res
}

func checkHostile(t *testing.T, args []string, in hostileInput, res hostileResult) {
	t.Helper()
	for _, bad := range []string{"panic:", "goroutine ", "fatal error:", "runtime: out of memory"} {
		if strings.Contains(res.stderr, bad) {
			t.Fatalf("crashed (%s):\n%.2000s", bad, res.stderr)
		}
	}
	if res.code == -1 {
		t.Fatalf("killed after %s (a signal, or it ran past %s)", res.took, hangAfter)
	}
	if res.cpu > maxCPU {
		t.Errorf("took %s of CPU (%s wall), more than %s", res.cpu.Round(time.Millisecond), res.took.Round(time.Millisecond), maxCPU)
	}
	if res.peakRSS > maxPeakRSS {
		t.Errorf("peak memory %d MiB, more than %d MiB", res.peakRSS>>20, maxPeakRSS>>20)
	}
	// check says everything on stdout, as a monitoring plugin; its
	// exit 1 and 2 are WARNING and CRITICAL, found in the input.
	msg, named := res.stderr, res.code != exitFailure
	if args[0] == "check" {
		msg, named = res.stdout, res.code == int(stateUnknown)
		if res.stderr != "" {
			t.Errorf("check wrote to stderr: %.500q", res.stderr)
		}
	}
	if res.code != 0 {
		name := "stdin"
		if args[0] == "check-config" {
			name = "/dev/stdin"
		}
		if named && !strings.Contains(msg, name) {
			t.Errorf("exit %d, but the error does not name %s: %.500q", res.code, name, msg)
		}
		if in.stdin != nil && !strings.Contains(msg, "larger than") {
			t.Errorf("endless input: the error does not give the limit: %.500q", msg)
		}
	}
	t.Logf("exit %d in %s (%s CPU), peak %d MiB: %.160s", res.code, res.took.Round(time.Millisecond), res.cpu.Round(time.Millisecond), res.peakRSS>>20, firstLine(msg))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return fmt.Sprint(l)
}
