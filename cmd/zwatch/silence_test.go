package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/silence"
)

// fireOffline saves, as the rule engine would, the state of host nas1
// whose pool vault has a disk taken offline (captured OpenZFS 2.3.2).
func fireOffline(t *testing.T, ctx context.Context, b *bus.Bus) []alert.Alert {
	t.Helper()
	data, err := os.ReadFile(captured + "b1-offline.zpool-status-j.json")
	if err != nil {
		t.Fatal(err)
	}
	pools, err := zfs.ParseStatus(data)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := bus.Wrap(facts.ZpoolStatus.Name(), "nas1", "zpool_status", time.Now(), facts.StatusData{Source: "json", Pools: pools})
	if err != nil {
		t.Fatal(err)
	}
	env, err := bus.Decode(msg, facts.ZpoolStatus.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	e := rules.NewEngine(cfg, nil)
	now := time.Now()
	if err := e.Observe(env, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.Tick(now)
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}
	return e.Alerts("nas1")
}

type silenceList struct {
	Silences []struct {
		silence.Silence
		State    silence.State `json:"state"`
		Matching []struct {
			Name     string         `json:"name"`
			Severity alert.Severity `json:"severity"`
			Silenced bool           `json:"silenced"`
		} `json:"matching"`
	} `json:"silences"`
}

func listJSON(t *testing.T, args ...string) silenceList {
	t.Helper()
	out, errOut, code := run(t, append(args, "silence", "list", "--json")...)
	if code != exitOK {
		t.Fatalf("silence list --json exits %d: %s", code, errOut)
	}
	var l silenceList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return l
}

// `zwatch silence add/list/expire` through the running daemon's bus (its
// loopback listener, with the credentials in the state directory): the ID
// printed, the severity it covers taken from the alerts firing, the alerts
// it matches shown and marked in `zwatch alerts --json`, expiry by a prefix
// of the ID, and the silences still there when the daemon is stopped.
func TestSilenceCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	state := t.TempDir()
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\nnotify:\n  console: false\n", state))
	b := openDaemonBus(t, ctx, cfgPath)
	defer func() { b.Close() }()
	firing := fireOffline(t, ctx, b)
	worst := alert.Info
	for _, a := range firing {
		if a.Labels["pool"] == "vault" && a.State == alert.Firing && a.Severity.Rank() > worst.Rank() {
			worst = a.Severity
		}
	}

	out, errOut, code := run(t, "-c", cfgPath, "silence", "add", "pool=vault", "--for", "7d", "--comment", "waiting for the new disk")
	if code != exitOK {
		t.Fatalf("silence add exits %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	if !strings.Contains(errOut, "It matches") || !strings.Contains(errOut, "(7d), up to "+string(worst)) {
		t.Errorf("add said %q", errOut)
	}
	l := listJSON(t, "-c", cfgPath)
	if len(l.Silences) != 1 || l.Silences[0].ID != id || l.Silences[0].State != silence.Active || l.Silences[0].MaxSeverity != worst ||
		l.Silences[0].CreatedBy == "" || l.Silences[0].Comment != "waiting for the new disk" || len(l.Silences[0].Matching) == 0 {
		t.Fatalf("list: %+v", l)
	}
	for _, m := range l.Silences[0].Matching {
		if !m.Silenced {
			t.Errorf("%s %s not silenced by a silence up to %s", m.Severity, m.Name, worst)
		}
	}
	out, _, code = run(t, "-c", cfgPath, "alerts", "--all-hosts", "--json")
	if code != exitOK || !strings.Contains(out, `"silenced": {`) || !strings.Contains(out, id) {
		t.Errorf("zwatch alerts --json shows no silenced alert (exit %d):\n%.2000s", code, out)
	}
	out, _, _ = run(t, "-c", cfgPath, "alerts", "--all-hosts")
	if !strings.Contains(out, "silenced until") || !strings.Contains(out, "waiting for the new disk") || !strings.Contains(out, "Silences (1)") {
		t.Errorf("zwatch alerts shows no silence:\n%s", out)
	}

	// A pending one, then the first expired by a prefix of its ID.
	start := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	if _, errOut, code := run(t, "-c", cfgPath, "silence", "add", "ScrubNever", "--start", start, "--for", "1d", "--comment", "x", "--any-severity"); code != exitOK {
		t.Fatalf("add pending: %d %s", code, errOut)
	}
	out, errOut, code = run(t, "-c", cfgPath, "silence", "expire", id[:6])
	if code != exitOK || !strings.Contains(out, "silence "+id[:8]) || !strings.Contains(out, "expired. Alerts that still fire page again: ") {
		t.Fatalf("expire exits %d: %q %q", code, out, errOut)
	}
	out, _, _ = run(t, "-c", cfgPath, "silence", "list")
	if strings.Contains(out, id) || !strings.Contains(out, "pending") {
		t.Errorf("list after expire:\n%s", out)
	}
	b.Close()

	// No daemon: the commands open the store; what was made is still there.
	l = listJSON(t, "-c", cfgPath, "--state-dir", state)
	if len(l.Silences) != 1 || l.Silences[0].MaxSeverity != alert.Critical || l.Silences[0].State != silence.Pending {
		t.Errorf("after the daemon stopped: %+v", l)
	}
	out, _, _ = run(t, "-c", cfgPath, "silence", "list", "--expired")
	if !strings.Contains(out, id) || !strings.Contains(out, "expired") {
		t.Errorf("list --expired:\n%s", out)
	}
}

func TestSilenceCommandsRefuseBadInput(t *testing.T) {
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\n", t.TempDir()))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "pool=tank"}, "--comment is required"},
		{[]string{"add", "--comment", "x"}, "no matchers"},
		{[]string{"add", "pool=tank", "vdev", "--comment", "x"}, `matcher "vdev": a matcher is NAME=VALUE`},
		{[]string{"add", "pool=~[", "--comment", "x"}, `"[" is not an RE2 regular expression`},
		{[]string{"add", "host!=nas1", "--comment", "x"}, "would silence everything"},
		{[]string{"add", "pool=tank", "--comment", "x", "--for", "a week"}, `--for: "a week" is not a duration`},
		{[]string{"add", "pool=tank", "--comment", "x", "--for", "0s"}, "above 0"},
		{[]string{"add", "pool=tank", "--comment", "x", "--until", "tomorrow"}, "--until \"tomorrow\" is not an RFC 3339 time"},
		{[]string{"add", "pool=tank", "--comment", "x", "--until", "2001-01-01T00:00:00Z"}, "in the past"},
		{[]string{"add", "pool=tank", "--comment", "x", "--max-severity", "loud"}, "--max-severity \"loud\""},
		{[]string{"add", "pool=tank", "--comment", "x", "--any-severity", "--max-severity", "info"}, "give one"},
		{[]string{"expire", "nope"}, `silence "nope": no such silence`},
	} {
		_, errOut, code := run(t, append([]string{"-c", cfgPath, "silence"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("silence %q: exit %d, %q; want %d and %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
}

// asOtherUserEnv carries the arguments to TestSilenceAsAnotherUserProcess.
const asOtherUserEnv = "ZWATCH_TEST_CLI_ARGS"

// TestSilenceAsAnotherUserProcess runs the command line in
// ZWATCH_TEST_CLI_ARGS (run by TestSilenceNeedsTheStateDirCredentials as
// the user nobody) and prints its exit status.
func TestSilenceAsAnotherUserProcess(t *testing.T) {
	args := os.Getenv(asOtherUserEnv)
	if args == "" {
		t.Skip("run by TestSilenceNeedsTheStateDirCredentials")
	}
	code := execute(context.Background(), &globals{stdout: os.Stdout, stderr: os.Stdout}, strings.Split(args, "\x1f"))
	fmt.Printf("\nEXIT %d\n", code)
}

// A local user who is not root cannot add or expire silences: the running
// daemon's bus wants the credentials in the state directory, which only
// root reads, and the store itself is root's too.
func TestSilenceNeedsTheStateDirCredentials(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the command as the user nobody")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "zwatch-silence-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "zwatch.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf("host: nas1\nstate_dir: %s\nnotify:\n  console: false\n", state)), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "zwatch.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	asNobody := func(args ...string) (string, int) {
		cmd := exec.CommandContext(ctx, bin, "-test.run=^TestSilenceAsAnotherUserProcess$", "-test.count=1")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), asOtherUserEnv+"="+strings.Join(args, "\x1f"), "HOME="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		i := strings.LastIndex(string(out), "\nEXIT ")
		if i < 0 {
			t.Fatalf("the command as nobody: %v\n%s", err, out)
		}
		code, _ := strconv.Atoi(strings.Fields(string(out[i+6:]))[0])
		t.Logf("as nobody, %q: exit %d: %s", args[2:], code, strings.TrimSpace(string(out[:i])))
		return string(out), code
	}

	b := openDaemonBus(t, ctx, cfgPath)
	defer func() { b.Close() }()
	id, errOut, code := run(t, "-c", cfgPath, "silence", "add", "pool=tank", "--comment", "root may")
	if code != exitOK {
		t.Fatalf("as root: %d %s", code, errOut)
	}
	id = strings.TrimSpace(id)
	out, code := asNobody("-c", cfgPath, "silence", "add", "pool=backup", "--comment", "nobody may not")
	if code == exitOK || !strings.Contains(out, "permission denied") || !strings.Contains(out, "run this as the user zwatch runs as") {
		t.Errorf("add as nobody with the daemon running: exit %d\n%s", code, out)
	}
	out, code = asNobody("-c", cfgPath, "silence", "expire", id)
	if code == exitOK || !strings.Contains(out, "permission denied") {
		t.Errorf("expire as nobody: exit %d\n%s", code, out)
	}
	b.Close()
	out, code = asNobody("-c", cfgPath, "silence", "add", "pool=backup", "--comment", "nobody may not")
	if code == exitOK {
		t.Errorf("add as nobody with no daemon: exit %d\n%s", code, out)
	}
	l := listJSON(t, "-c", cfgPath)
	if len(l.Silences) != 1 || l.Silences[0].ID != id || l.Silences[0].State != silence.Active {
		t.Errorf("silences after nobody's tries: %+v", l)
	}
}
