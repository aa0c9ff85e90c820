package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pasted holds pasted variants derived from real outputs (see its README).
const pasted = "../../testdata/zpool-status-pasted/"

// A pasted output reads as the output itself, in status and in rules eval.
func TestStatusPastedInput(t *testing.T) {
	for _, c := range []struct {
		file, want string
		code       int
	}{
		{"syslog--freebsd-single-status-v-permanent-errors.txt", "errors: 1 permanent data errors", exitFailure},
		{"journalctl-short--zol-0.7-multiple-pools-9P-cksum-file-vdev-tabs.txt", "pool default: ONLINE", exitFailure},
		{"chat-irc--linux-truenas-raidz2-write-error-9P-tabs.txt", "see:    ZFS-8000-9P", exitFailure},
		{"markdown-fence--openzfs-2.2.2-status-x-mirrors-8A-31-data-errors-tabs.txt", "errors: 31 permanent data errors", exitFailure},
		{"markdown-fence--b1-offline.zpool-status-j.json", "pool vault: DEGRADED", exitFailure},
		{"crlf-tabs-expanded--c1-removed.zpool-status.txt", "pool vault: DEGRADED", exitFailure},
		{"fragment-from-config--freebsd-single-status-v-permanent-errors.txt", "/ztest/dummy", exitFailure},
		// A healthy pool's table alone: errors unknown, so not "healthy".
		{"fragment-table-only-syslog--a.zpool-status.txt", "errors: unknown (the input has no errors: line)", exitFailure},
	} {
		out, errOut, code := run(t, "status", "--input", pasted+c.file)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d (want %d), want %q in:\n%s%s", c.file, code, c.code, c.want, out, errOut)
		}
		if strings.Contains(c.file, "table-only") && strings.Contains(out, "errors: none") {
			t.Errorf("%s: says errors: none without an errors: line:\n%s", c.file, out)
		}
	}
	out, _, _ := run(t, "status", "--json", "--input", pasted+"fragment-table-only-syslog--a.zpool-status.txt")
	var rep statusReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Pools) != 1 || rep.Pools[0].Name != "fast" || !rep.Pools[0].ErrorsUnknown {
		t.Fatalf("fragment as JSON: %s", out)
	}
	if !strings.Contains(out, `"errors_unknown": true`) {
		t.Errorf("--json lacks errors_unknown (docs/status-schema.md):\n%s", out)
	}
}

// Unknown data errors are not "no errors": a pasted table without its
// errors: line keeps a PoolDataErrors alert firing; a real "No known data
// errors" resolves it.
func TestRulesEvalErrorsUnknownKeepsAlert(t *testing.T) {
	real := "../../testdata/zpool-status/freebsd-single-status-v-permanent-errors.txt"
	state := func(files ...string) string {
		out, errOut, code := run(t, append([]string{"rules", "eval", "--json"}, files...)...)
		if code != exitOK {
			t.Fatalf("rules eval %v: exit %d: %s", files, code, errOut)
		}
		var doc struct {
			Alerts []struct{ Name, State string }
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, a := range doc.Alerts {
			if a.Name == "PoolDataErrors" {
				return a.State
			}
		}
		return "absent"
	}
	if s := state(real, pasted+"fragment-table-only--freebsd-single-status-v-permanent-errors.txt"); s != "firing" {
		t.Errorf("after a table without errors: line, PoolDataErrors is %s, want still firing", s)
	}
	if s := state(pasted + "syslog--freebsd-single-status-v-permanent-errors.txt"); s != "firing" {
		t.Errorf("a syslog-pasted output with a data error: PoolDataErrors %s", s)
	}
	healthy := filepath.Join(t.TempDir(), "healthy")
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	// The same output, its errors: section saying there are none (derived).
	i := strings.Index(string(b), "errors:")
	os.WriteFile(healthy, []byte(string(b[:i])+"errors: No known data errors\n"), 0o644)
	if s := state(real, healthy); s != "resolved" {
		t.Errorf("after No known data errors, PoolDataErrors is %s, want resolved", s)
	}
}

// An empty or non-status input is an error with exit 3, never "no pools".
func TestNotStatusInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	dmesg := write("dmesg", "[    0.000000] Linux version 6.1.0-13-amd64\n[    1.234567] ZFS: Loaded module v2.1.11-1, ZFS pool version 5000\n")
	text := write("text", "Hi, my pool is broken, can you help?\npool: tank I think\n")
	fences := write("fences", "```\n```\n")
	smartJSON := captured + "a.smartctl-a-json-nvme.json"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--input", dmesg}, "not a zpool status output"},
		{[]string{"status", "--input", text}, "not a zpool status output"},
		{[]string{"status", "--input", fences}, "holds no zpool status output"},
		{[]string{"status", "--input", smartJSON}, "not a zpool status output"},
		{[]string{"rules", "eval", text}, "not zpool status output"},
		{[]string{"rules", "eval", fences}, "is empty"},
		{[]string{"disks", "--input", dmesg}, "not a smartctl JSON output"},
		{[]string{"disks", "--input", captured + "a.zpool-status-j.json"}, "not a smartctl JSON output"},
	} {
		out, errOut, code := run(t, c.args...)
		if code != exitNoData || !strings.Contains(errOut, c.want) || strings.Contains(out, "no pools") {
			t.Errorf("%v: exit %d (want %d), stderr %q, stdout %q", c.args, code, exitNoData, errOut, out)
		}
	}
	// rules eval reads kernel logs: one that says nothing about a disk has no alert.
	if out, errOut, code := run(t, "rules", "eval", dmesg); code != exitOK || out != "no alerts\n" {
		t.Errorf("rules eval of a quiet dmesg: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
}
