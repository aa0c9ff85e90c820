package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const captured = "../../testdata/captured/zfs-2.3.2/"

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb}
	code = execute(context.Background(), g, args)
	return out.String(), errb.String(), code
}

func TestStatusInputTextAndJSONAgree(t *testing.T) {
	outText, _, codeText := run(t, "status", "--input", captured+"b1-offline.zpool-status-p-P.txt", "--json")
	outJSON, _, codeJSON := run(t, "status", "--input", captured+"b1-offline.zpool-status-j.json", "--json")
	if codeText != exitFailure || codeJSON != exitFailure {
		t.Fatalf("a DEGRADED pool must exit %d, got %d and %d", exitFailure, codeText, codeJSON)
	}
	var a, b statusReport
	if err := json.Unmarshal([]byte(outText), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(outJSON), &b); err != nil {
		t.Fatal(err)
	}
	if len(a.Pools) != 2 || len(b.Pools) != 2 {
		t.Fatalf("pools: %d and %d", len(a.Pools), len(b.Pools))
	}
	for i := range a.Pools {
		pa, pb := a.Pools[i], b.Pools[i]
		if pa.Name != pb.Name || pa.State != pb.State || len(pa.Vdevs) != len(pb.Vdevs) {
			t.Errorf("pool %d differs: %s/%s vs %s/%s", i, pa.Name, pa.State, pb.Name, pb.State)
		}
		la, lb := pa.Vdevs[0].Leaves(), pb.Vdevs[0].Leaves()
		for j := range la {
			if la[j].State != lb[j].State || la[j].Path != lb[j].Path {
				t.Errorf("leaf %d: %s %s vs %s %s", j, la[j].Path, la[j].State, lb[j].Path, lb[j].State)
			}
		}
	}
}

func TestStatusInputHealthyExitsZero(t *testing.T) {
	out, _, code := run(t, "status", "--input", captured+"a.zpool-status.txt")
	if code != exitOK {
		t.Fatalf("healthy pools exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "pool vault: ONLINE") || !strings.Contains(out, "raidz2-0") {
		t.Fatalf("unexpected rendering:\n%s", out)
	}
}

func TestStatusInputGarbage(t *testing.T) {
	f := filepath.Join(t.TempDir(), "x")
	os.WriteFile(f, []byte("\x00\x01 not zpool output at all {"), 0o644)
	_, errOut, code := run(t, "status", "--input", f)
	if code != exitNoData || !strings.Contains(errOut, "not a zpool status output") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

func TestCheckConfig(t *testing.T) {
	out, _, code := run(t, "check-config", "../../configs/zwatch.example.yaml")
	if code != exitOK || !strings.Contains(out, "valid") {
		t.Fatalf("example config: code %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("zfs:\n  status_interval: soon\n"), 0o600)
	_, errOut, code := run(t, "check-config", bad)
	if code != exitUsage || !strings.Contains(errOut, `zfs.status_interval = "soon"`) {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "check-config", filepath.Join(t.TempDir(), "missing.yaml"))
	if code != exitUsage || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("missing file: code %d, %q", code, errOut)
	}
}

func TestDisksInputJSON(t *testing.T) {
	out, _, code := run(t, "disks", "--input", captured+"a.smartctl-a-json-nvme.json", "--json")
	if code != exitOK {
		t.Fatalf("code %d", code)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "serial", "wwn", "transport", "smart_passed", "temperature_c", "power_on_hours", "attributes", "nvme", "exit_status", "errors"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("disks --json lacks %q (docs/smart-schema.md)", k)
		}
	}
	if rep["transport"] != "nvme" {
		t.Errorf("transport %v", rep["transport"])
	}
}

func TestUsageErrors(t *testing.T) {
	if _, _, code := run(t, "status", "--no-such-flag"); code != exitUsage {
		t.Fatalf("unknown flag exits %d", code)
	}
	if _, _, code := run(t, "frobnicate"); code != exitUsage {
		t.Fatalf("unknown command exits %d", code)
	}
}

func TestHelpListsWorkingCommands(t *testing.T) {
	out, _, code := run(t, "--help")
	if code != exitOK {
		t.Fatal(code)
	}
	for _, c := range []string{"run", "status", "check-config", "check", "version", "disks", "alerts", "rules", "notify", "replace", "provision"} {
		if !strings.Contains(out, "\n  "+c+" ") {
			t.Errorf("--help does not list %s:\n%s", c, out)
		}
	}
}

func TestRulesEvalJSON(t *testing.T) {
	out, _, code := run(t, "rules", "eval", "--json", captured+"a.zpool-status-j.json", captured+"b1-offline.zpool-status-j.json")
	if code != exitOK {
		t.Fatalf("code %d", code)
	}
	var doc struct {
		Alerts []struct {
			Name, Severity, State, Summary string
			Labels                         map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range doc.Alerts {
		if a.Name == "VdevState" && a.State == "firing" && strings.Contains(a.Labels["vdev"], "ZWV0001") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no firing VdevState for the offlined disk: %s", out)
	}
}

// What is not a saved output is an error naming it, never "no pools, all
// fine": an empty file, a directory, a device, endless stdin.
func TestInputThatIsNoOutput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte(" \n\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--input", empty}, empty + " is empty"},
		{[]string{"status", "--input", dir}, "is a directory"},
		{[]string{"status", "--input", "/dev/zero"}, "is a device"},
		{[]string{"disks", "--input", empty}, empty + " is empty"},
		{[]string{"rules", "eval", "/dev/zero"}, "is a device"},
	} {
		_, errOut, code := run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
	// /dev/zero on stdin: bounded, then refused.
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	saved := os.Stdin
	os.Stdin = zero
	defer func() { os.Stdin = saved }()
	_, errOut, code := run(t, "status", "--input", "-")
	if code != exitNoData || !strings.Contains(errOut, "stdin: larger than 64 MiB") {
		t.Errorf("endless stdin: code %d, stderr %q", code, errOut)
	}
}

// check-config names a channel's quiet hours, in the box's zone.
func TestCheckConfigQuietNote(t *testing.T) {
	f := filepath.Join(t.TempDir(), "quiet.yaml")
	os.WriteFile(f, []byte("notify:\n  channels:\n    - {name: mail, url: \"ntfy://ntfy.sh/nas-3f9c\", quiet: {from: \"22:00\", to: \"07:30\"}}\n"), 0o600)
	out, errOut, code := run(t, "check-config", f)
	if code != exitOK || !strings.Contains(errOut, "note: mail is quiet from 22:00 to 07:30 every night (the box's time zone") ||
		!strings.Contains(out, "quiet:") {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// check-config says where actions.replace is offered, that it needs a
// Telegram channel with answer_users, and refuses it where it cannot work.
func TestCheckConfigReplaceNotes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		yaml, want string
		code       int
	}{
		{"actions: {replace: true}\nnotify:\n  channels:\n    - {name: phone, type: telegram, token: \"123456:ABC-DEF\", chat_ids: [\"42\"], answer_users: [\"123456789\"]}\n",
			"note: actions.replace: pages of this machine's failing disks offer Replace on phone", exitOK},
		{"actions: {replace: true}\nnotify:\n  channels:\n    - {name: mail, url: \"ntfy://ntfy.sh/nas-3f9c\"}\n",
			"note: actions.replace is on, but no channel can offer it: it needs a telegram channel with answer_users", exitOK},
		{"role: agent\nbus: {url: \"nats://nas1:4222\"}\nactions: {replace: true}\n", "actions.replace", exitUsage},
	} {
		f := filepath.Join(dir, "replace.yaml")
		os.WriteFile(f, []byte(c.yaml), 0o600)
		_, errOut, code := run(t, "check-config", f)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: code %d, stderr:\n%s", c.yaml, code, errOut)
		}
	}
}
