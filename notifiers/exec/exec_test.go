package exec_test

// The exec channel runs real programs: small shell scripts each test writes
// into its own t.TempDir(), in the manner of smartd's -M exec scripts
// (https://www.smartmontools.org/browser/trunk/smartmontools/smartd.conf.5.in)
// and ZED's zedlets (https://openzfs.github.io/openzfs-docs/man/master/8/zed.8.html).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/exec"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// script writes body as an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "page-me")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func execChannel(cfg exec.Config) config.ChannelConfig {
	return config.ChannelConfig{Name: "script", Type: "exec", Settings: cfg}
}

func send(t *testing.T, ch notifiers.Channel, n alert.Notification) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ch.Send(ctx, notifiers.RenderGuided(n, notifytest.Guide))
}

// TestExecHandsOverStdinAndEnvironment parses the channel from YAML as
// zwatch does, runs a script that records what it got, and checks the
// payload, the ZWATCH_* variables and that nothing else of zwatch's own
// environment leaked.
func TestExecHandsOverStdinAndEnvironment(t *testing.T) {
	out := t.TempDir()
	t.Setenv("ZW_PAGER_TOKEN", "tok-4f9a2c")
	t.Setenv("ZW_UNLISTED_SECRET", "must-not-leak")
	prog := script(t, `cat > "$OUT_DIR/stdin.json"; env > "$OUT_DIR/env.txt"; echo "$@" > "$OUT_DIR/args.txt"`)
	l, err := config.Parse(strings.NewReader(fmt.Sprintf(`host: nas1
state_dir: /tmp/zw
notify:
  channels:
    - name: script
      type: exec
      command: [%s, --urgent, "two words"]
      timeout: 5s
      env: {OUT_DIR: %q, PAGER_TOKEN: "${ZW_PAGER_TOKEN}"}
`, prog, out)), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	masked, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	if s := string(masked); strings.Contains(s, "tok-4f9a2c") || !strings.Contains(s, "PAGER_TOKEN: '****** (from ${ZW_PAGER_TOKEN})'") {
		t.Errorf("Masked():\n%s", s)
	}
	ch := notifytest.BuildOne(t, l.Config.Notify.Channels[0])
	if err := send(t, ch, notifytest.Firing("nas1", "e-1")); err != nil {
		t.Fatal(err)
	}

	var p channel.Payload
	raw, _ := os.ReadFile(filepath.Join(out, "stdin.json"))
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("stdin is not the payload: %v: %s", err, raw)
	}
	if p.Version != "1" || p.ID != "e-1" || p.Host != "nas1" || p.Status != "firing" || p.Severity != "critical" ||
		p.Summary != notifytest.WantSummary || len(p.Notification.Alerts) != 1 || p.Notification.Alerts[0].Replacement.Pool != "vault" {
		t.Errorf("payload %+v", p)
	}
	if args, _ := os.ReadFile(filepath.Join(out, "args.txt")); string(args) != "--urgent two words\n" {
		t.Errorf("argv %q: each item must be one argument", args)
	}

	envText, _ := os.ReadFile(filepath.Join(out, "env.txt"))
	env := map[string]string{}
	for _, line := range strings.Split(string(envText), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, " ") {
			env[k] = v
		}
	}
	for k, want := range map[string]string{
		"PATH": exec.DefaultPath, "PAGER_TOKEN": "tok-4f9a2c", "OUT_DIR": out,
		"ZWATCH_VERSION": "1", "ZWATCH_ID": "e-1", "ZWATCH_HOST": "nas1", "ZWATCH_STATUS": "firing",
		"ZWATCH_SEVERITY": "critical", "ZWATCH_TEST": "false", "ZWATCH_SUMMARY": notifytest.WantSummary,
		"ZWATCH_ALERTS": "ZpoolVdevFaulted", "ZWATCH_ALERT_COUNT": "1", "ZWATCH_POOLS": "vault",
		"ZWATCH_TITLE": "zwatch nas1: CRITICAL", "ZWATCH_GROUP_KEY": p.Notification.GroupKey,
		"ZWATCH_CREATED": p.Notification.Created.UTC().Format(time.RFC3339),
	} {
		if env[k] != want {
			t.Errorf("%s=%q, want %q", k, env[k], want)
		}
	}
	if !strings.Contains(string(envText), "ZWATCH_TEXT="+notifytest.WantSummary+"\n") {
		t.Error("ZWATCH_TEXT does not start with the summary")
	}
	for _, leak := range []string{"must-not-leak", "ZW_UNLISTED_SECRET", "HOME=", "ZW_PAGER_TOKEN"} {
		if strings.Contains(string(envText), leak) {
			t.Errorf("the program's environment holds %q from zwatch's own:\n%s", leak, envText)
		}
	}

	// A resolved notice says so in both forms.
	n := notifytest.Firing("nas1", "e-2")
	end := n.Alerts[0].StartsAt.Add(time.Hour)
	n.Alerts[0].State, n.Alerts[0].EndsAt, n.Status = alert.Resolved, &end, alert.Resolved
	if err := send(t, ch, n); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(filepath.Join(out, "stdin.json"))
	envText, _ = os.ReadFile(filepath.Join(out, "env.txt"))
	if !strings.Contains(string(raw), `"status":"resolved"`) || !strings.Contains(string(envText), "ZWATCH_STATUS=resolved\n") {
		t.Errorf("resolved notice: %s", envText)
	}
}

// TestExecExitStatusIsAFailedDelivery: a status other than 0 is an error
// with the program's last words, and env values never show in it.
func TestExecExitStatusIsAFailedDelivery(t *testing.T) {
	prog := script(t, `cat >/dev/null; echo "queued nothing"; echo "gateway refused token $PAGER_TOKEN" >&2; exit 3`)
	ch := notifytest.BuildOne(t, execChannel(exec.Config{Command: []string{prog},
		Env: map[string]config.Secret{"PAGER_TOKEN": {Value: "tok-4f9a2c"}}}))
	err := send(t, ch, notifytest.Firing("nas1", "e-3"))
	var re *exec.RunError
	if !errors.As(err, &re) || re.Kind != exec.KindFailed || re.ExitCode != 3 {
		t.Fatalf("err %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "exited with status 3: gateway refused token ******") || strings.Contains(msg, "tok-4f9a2c") {
		t.Errorf("err %q", msg)
	}
	if fix := ch.Fix(err); !strings.Contains(fix, "zwatch notify test") {
		t.Errorf("fix %q", fix)
	}

	// Floods are cut to their last 4 KiB.
	prog = script(t, `i=0; while [ $i -lt 3000 ]; do echo "noise line $i" >&2; i=$((i+1)); done; echo "the real reason" >&2; exit 1`)
	ch = notifytest.BuildOne(t, execChannel(exec.Config{Command: []string{prog}}))
	err = send(t, ch, notifytest.Firing("nas1", "e-4"))
	if !errors.As(err, &re) || !strings.HasSuffix(re.Output, "the real reason") || !strings.HasPrefix(re.Output, "…") || len(re.Output) > 4<<10+500 {
		t.Errorf("kept %d bytes: %.80q…", len(re.Output), re.Output)
	}
}

// TestExecTimeoutKillsTheProcessGroup: a program that hangs, with a child
// of its own, is killed with that child within the bound.
func TestExecTimeoutKillsTheProcessGroup(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	prog := script(t, `sleep 60 & echo "$$ $!" > "$1"; wait`)
	ch := notifytest.BuildOne(t, execChannel(exec.Config{Command: []string{prog, pids}, Timeout: config.Duration(2 * time.Second)}))
	start := time.Now()
	err := send(t, ch, notifytest.Firing("nas1", "e-5"))
	took := time.Since(start)
	var re *exec.RunError
	if !errors.As(err, &re) || re.Kind != exec.KindTimeout || !strings.Contains(err.Error(), "did not finish within 2s (timeout); killed with its process group") {
		t.Fatalf("err %v", err)
	}
	if took > 2*time.Second+2*time.Second {
		t.Errorf("took %s for a 2s timeout", took)
	}
	raw, _ := os.ReadFile(pids)
	fields := strings.Fields(string(raw))
	if len(fields) != 2 {
		t.Fatalf("pids %q", raw)
	}
	for _, f := range fields {
		pid, _ := strconv.Atoi(f)
		notifytest.WaitFor(t, 2*time.Second, "process "+f+" to be gone", func() bool { return !alive(pid) })
	}
	if fix := ch.Fix(err); !strings.Contains(fix, "took too long") {
		t.Errorf("fix %q", fix)
	}

	// notify.send_timeout bounds every delivery, so it caps a longer timeout.
	ch = notifytest.BuildOne(t, execChannel(exec.Config{Command: []string{script(t, "sleep 60")}, Timeout: config.Duration(time.Minute)}))
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	err = ch.Send(ctx, notifiers.Render(notifytest.Firing("nas1", "e-6")))
	if !errors.As(err, &re) || re.Kind != exec.KindTimeout || !strings.Contains(err.Error(), "notify.send_timeout, which caps timeout 1m0s") {
		t.Errorf("err %v", err)
	}
}

// TestExecLeftoversAreKilled: a program that exits 0 but leaves a child
// behind holding its output delivers, and the child does not outlive it.
func TestExecLeftoversAreKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	prog := script(t, `sleep 60 & echo $! > "$1"; exit 0`)
	ch := notifytest.BuildOne(t, execChannel(exec.Config{Command: []string{prog, pidFile}}))
	start := time.Now()
	if err := send(t, ch, notifytest.Firing("nas1", "e-7")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s", took)
	}
	raw, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	notifytest.WaitFor(t, 2*time.Second, "the leftover child to be gone", func() bool { return !alive(pid) })
}

// TestExecProgramsThatCannotRun: each reason a program does not start has
// its own error and fix.
func TestExecProgramsThatCannotRun(t *testing.T) {
	dir := t.TempDir()
	noExec := filepath.Join(dir, "not-executable")
	noShebang := filepath.Join(dir, "no-shebang")
	badInterp := filepath.Join(dir, "bad-interpreter")
	for path, content := range map[string]string{noExec: "#!/bin/sh\nexit 0\n", noShebang: "exit 0\n", badInterp: "#!/nonexistent/sh\nexit 0\n"} {
		mode := os.FileMode(0o755)
		if path == noExec {
			mode = 0o644
		}
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ program, kind, fix string }{
		{noExec, exec.KindDenied, "chmod 755 " + noExec},
		{filepath.Join(dir, "missing"), exec.KindMissing, "does not exist on this machine"},
		{noShebang, exec.KindFormat, "#!/bin/sh"},
		{badInterp, exec.KindMissing, "the interpreter on its #! line does not"},
		{dir, exec.KindDenied, "chmod"},
	} {
		ch := notifytest.BuildOne(t, execChannel(exec.Config{Command: []string{tc.program}}))
		err := send(t, ch, notifytest.Firing("nas1", "e-8"))
		var re *exec.RunError
		if !errors.As(err, &re) || re.Kind != tc.kind || !strings.Contains(err.Error(), tc.program+" cannot run") {
			t.Errorf("%s: err %v", tc.program, err)
			continue
		}
		if fix := ch.Fix(err); !strings.Contains(fix, tc.fix) {
			t.Errorf("%s: fix %q, want %q", tc.program, fix, tc.fix)
		}
	}
}

func TestExecConfigErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		`{name: a, type: exec}`:                                                  "notify.channels[0].command: empty: set the program and its arguments as a list",
		`{name: a, type: exec, command: [page-me]}`:                              `notify.channels[0].command[0] = "page-me": must be an absolute path (e.g. /usr/local/bin/page-me)`,
		`{name: a, type: exec, command: ["/usr/bin/logger -t zwatch"]}`:          "no shell splits it: write the program and each argument as its own list item, e.g. [/usr/bin/logger, -t, zwatch]",
		`{name: a, type: exec, command: /usr/bin/logger}`:                        "notify.channels[0].command",
		`{name: a, type: exec, command: [/x], timeout: -5s}`:                     "notify.channels[0].timeout",
		`{name: a, type: exec, command: [/x], env: {ZWATCH_HOST: x}}`:            "notify.channels[0].env.ZWATCH_HOST: ZWATCH_* variables describe the notification",
		`{name: a, type: exec, command: [/x], env: {"1BAD": x}}`:                 "notify.channels[0].env.1BAD: not a valid variable name",
		`{name: a, type: exec, command: [/x], url: "https://x"}`:                 "notify.channels[0].url: not used by type exec (its keys: command, timeout, env)",
		`{name: a, type: exec, command: [/x], env: {T: "${ZW_NOT_SET_HERE_X}"}}`: "ZW_NOT_SET_HERE_X is not set",
	} {
		_, err := config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  channels:\n    - "+yaml+"\n"), catalog.Config())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got  %v\n  want %q", yaml, err, want)
		}
	}
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting for its parent has).
func alive(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	s, err := p.Stat()
	return err == nil && s.State != "Z"
}
