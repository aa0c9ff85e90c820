package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/rules"
)

const captured211 = "../../testdata/captured/zfs-2.1.11/"

// checkNow is the clock of the tests that judge saved outputs: the day
// after the 2.3.2 captures, so a scrub's age does not depend on when the
// tests run.
var checkNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// checkRun runs the check as the command does, on the clock checkNow, and
// reads its output back by the guidelines' grammar.
func checkRun(t *testing.T, cfgYAML string, o checkOptions, args ...string) (pluginOutput, pluginResult) {
	t.Helper()
	g := &globals{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, configPath: filepath.Join(t.TempDir(), "absent.yaml")}
	if cfgYAML != "" {
		g.configPath, g.configSet = writeConfig(t, cfgYAML), true
	}
	if o.now.IsZero() {
		o.now = checkNow
	}
	r := runCheck(context.Background(), g, o, args)
	var b bytes.Buffer
	if err := r.write(&b); err != nil {
		t.Fatal(err)
	}
	po, err := parsePluginOutput(b.String())
	if err != nil {
		t.Fatalf("not plugin output: %v\n%s", err, b.String())
	}
	if po.Service != "ZWATCH" || po.State != r.State.String() {
		t.Fatalf("status line %s %s for state %s", po.Service, po.State, r.State)
	}
	return po, r
}

func wantPerf(t *testing.T, po pluginOutput, label, value string) {
	t.Helper()
	p, ok := po.perf(label)
	if !ok {
		t.Errorf("no performance data %s in %+v", label, po.Perf)
		return
	}
	got := perfNumber(p.Value) + p.UOM + ";" + p.Warn + ";" + p.Crit + ";" + p.Min + ";" + p.Max
	if got != value {
		t.Errorf("%s=%s, want %s", label, got, value)
	}
}

// Each exit code on the real recorded outputs: the exact status line, the
// performance data read back by the guidelines' grammar, and the alerts the
// daemon's rules raise on the same outputs, each on a line of its own.
func TestCheckInputEveryState(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   string
		files []string
		state pluginState
		text  string
		perf  map[string]string
	}{{
		name:  "healthy single-disk pool, scrubbed, its SSD's SMART (2.3.2, -j)",
		files: []string{captured + "j3-scrubbed.zpool-status-j.json", captured + "j3-scrubbed.zpool-list-Hp.txt", captured + "a.smartctl-a-json-ata-ssd.json"},
		state: stateOK,
		text:  "1 pool ONLINE (tank), 1 disk checked, no alerts",
		perf: map[string]string{
			"tank_capacity":      "10%;80;90;0;100",
			"tank_fragmentation": "3%;;;0;100",
			// the scrub ended 2026-11-30 16:09:02 UTC; ScrubOverdue's 35d
			"tank_scrub_age":       "71458s;3024000;;0;",
			"tank_checksum_errors": "0c;0;;0;",
			// QEMU's emulated disk reports no rotation rate: the HDD levels
			// 55/60 °C apply, written as the ranges that alert at them
			"S3Z9NB0K000003_temperature":         "31;54;59;;",
			"S3Z9NB0K000003_reallocated_sectors": "0;0;49;0;",
		},
	}, {
		name:  "healthy, 2.1.11 text",
		files: []string{captured211 + "j3-scrubbed.zpool-status.txt", captured211 + "j3-scrubbed.zpool-list-Hp.txt"},
		state: stateOK,
		text:  "1 pool ONLINE (tank), no alerts",
		perf:  map[string]string{"tank_capacity": "10%;80;90;0;100", "tank/raidz1-0_read_errors": "", "tank_read_errors": "0c;0;;0;"},
	}, {
		name:  "raidz2 DEGRADED with a disk to spare (2.3.2)",
		files: []string{captured + "b1-offline.zpool-status-j.json", captured + "b1-offline.zpool-list-Hp.txt"},
		state: stateWarning,
		text: "pool vault is DEGRADED: disk/by-id/virtio-ZWV0001-part1 OFFLINE; " +
			"disk/by-id/virtio-ZWV0001-part1 in vault/raidz2-0 is OFFLINE: raidz2-0 can lose 1 more disk (+3 more)",
		perf: map[string]string{"vault_capacity": "2%;80;90;0;100", "vault/raidz2-0_read_errors": "0c;0;;0;", "fast/mirror-0_write_errors": "0c;0;;0;"},
	}, {
		name:  "raidz2 DEGRADED, 2.1.11 text",
		files: []string{captured211 + "b1-offline.zpool-status-p-P.txt"},
		state: stateWarning,
		text: "pool vault is DEGRADED: disk/by-id/virtio-ZWV0001-part1 OFFLINE; " +
			"disk/by-id/virtio-ZWV0001-part1 in vault/raidz2-0 is OFFLINE: raidz2-0 can lose 1 more disk (+3 more)",
	}, {
		name:  "a pool past the configured capacity warning",
		cfg:   "rules:\n  capacity:\n    warning: 92\n    critical: 95\n",
		files: []string{captured + "h-full.zpool-status-j.json", captured + "h-full.zpool-list-Hp.txt"},
		state: stateWarning,
		text: "pool dpool is DEGRADED: /var/tmp/draid/f1 FAULTED; " +
			"/var/tmp/draid/f1 in dpool/draid1:2d:4c:1s-0 is FAULTED: draid1:2d:4c:1s-0 can lose 1 more disk (+3 more)",
		perf: map[string]string{"small_capacity": "93%;92;95;0;100", "small_fragmentation": "12%;;;0;100"},
	}, {
		name:  "raidz2 with no redundancy left (2.3.2)",
		files: []string{captured + "c4-missing.zpool-status-j.json", captured + "c4-missing.zpool-list-Hp.txt"},
		state: stateCritical,
		text: "pool vault is DEGRADED: disk/by-id/scsi-35000c500a0000001-part1 REMOVED, disk/by-id/wwn-0x5000c500a0000002-part1 UNAVAIL; " +
			"disk/by-id/scsi-35000c500a0000001-part1 in vault/raidz2-0 is REMOVED: raidz2-0 has no redundancy left (+4 more)",
		perf: map[string]string{"vault_scrub_age": "73358s;3024000;;0;"},
	}, {
		name:  "a failed NVMe drive",
		files: []string{captured + "g.smartctl-a-json-nvme-failed.json"},
		state: stateCritical,
		text:  "ZWNVME0001 (/dev/nvme0): SMART health FAILED; ZWNVME0001 (/dev/nvme0): NVMe critical warning: reliability degraded by media or internal errors",
		perf:  map[string]string{"ZWNVME0001_temperature": "50;69;79;;", "ZWNVME0001_media_errors": "0c;0;9;0;"},
	}, {
		name:  "permanent data errors after a scrub (2.1.11)",
		files: []string{captured211 + "j4-errors.zpool-status-v-p-P.txt"},
		state: stateCritical,
		text:  "pool tank has 1 permanent data error(s): /tank/victim.bin; scrub of tank ended with 4 error(s) (+2 more)",
	}} {
		t.Run(c.name, func(t *testing.T) {
			po, r := checkRun(t, c.cfg, checkOptions{inputs: c.files})
			if r.State != c.state || po.Text != c.text {
				t.Fatalf("got %s - %s\nwant %s - %s\n%s", po.State, po.Text, c.state, c.text, strings.Join(po.Long, "\n"))
			}
			for label, want := range c.perf {
				if want == "" {
					if _, ok := po.perf(label); ok {
						t.Errorf("unexpected performance data %s", label)
					}
					continue
				}
				wantPerf(t, po, label, want)
			}
			// The same alerts as the rules raise on these outputs, one line each.
			cfg := config.DefaultRules()
			if c.cfg != "" {
				l, err := (&globals{configPath: writeConfig(t, c.cfg), configSet: true}).loadConfig()
				if err != nil {
					t.Fatal(err)
				}
				cfg = l.Config.Rules
			}
			ev, err := rules.EvalFilesAt(c.files, cfg, checkNow)
			if err != nil {
				t.Fatal(err)
			}
			var firing []string
			for _, a := range ev.Alerts {
				if a.State == "firing" {
					firing = append(firing, fmt.Sprintf("%s: %s [%s]", strings.ToUpper(string(a.Severity)), a.Summary, a.Name))
				}
			}
			if len(firing) != len(po.Long) {
				t.Fatalf("%d alert lines for %d firing alerts:\n%s", len(po.Long), len(firing), strings.Join(po.Long, "\n"))
			}
			for _, f := range firing {
				if !slices.ContainsFunc(po.Long, func(l string) bool { return strings.HasPrefix(l, f) }) {
					t.Errorf("no line for %q in\n%s", f, strings.Join(po.Long, "\n"))
				}
			}
		})
	}
}

// Each alert's line ends with the first command of its fix: the guided
// replacement for a disk, the command its description names otherwise.
func TestCheckLongOutputNamesTheFix(t *testing.T) {
	po, _ := checkRun(t, "", checkOptions{inputs: []string{captured + "c4-missing.zpool-status-j.json"}})
	for _, want := range []string{
		"CRITICAL: disk/by-id/wwn-0x5000c500a0000002-part1 in vault/raidz2-0 is UNAVAIL: raidz2-0 has no redundancy left [VdevState] - fix: zwatch replace vault 11439295528939010206",
		"WARNING: pool fast has never been scrubbed [ScrubNever] - fix: zpool scrub fast",
	} {
		if !slices.Contains(po.Long, want) {
			t.Errorf("no line %q in\n%s", want, strings.Join(po.Long, "\n"))
		}
	}
	if !strings.HasPrefix(po.Long[0], "WARNING: pool vault is DEGRADED") {
		t.Errorf("the pool's state is not named first: %q", po.Long[0])
	}
}

// What cannot be checked is UNKNOWN with the reason on stdout: an input
// that is no tool output, a directory, an empty file, bad flags, a bad
// config.
func TestCheckUnknown(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o644)
	for _, c := range []struct {
		name, cfg string
		o         checkOptions
		args      []string
		want      string
	}{
		{"smartctl text, not JSON", "", checkOptions{inputs: []string{captured + "a.smartctl-a-ata.txt"}}, nil, "rules eval a.smartctl-a-ata.txt: not `zpool status`"},
		{"a directory", "", checkOptions{inputs: []string{dir}}, nil, "is a directory"},
		{"an empty file", "", checkOptions{inputs: []string{empty}}, nil, empty + " is empty"},
		{"a FILE without --input", "", checkOptions{}, []string{"x"}, `unexpected argument "x"`},
		{"both sources", "", checkOptions{inputs: []string{empty}, fromDaemon: true}, nil, "--from-daemon and --input exclude each other"},
		{"a bad timeout", "", checkOptions{timeout: "-3"}, nil, `-t/--timeout "-3"`},
		{"a bad config", "zfs:\n  command_timeout: soon\n", checkOptions{}, nil, `config: `},
		{"nothing to check", "zfs:\n  enabled: false\nsmart:\n  enabled: false\n", checkOptions{}, nil, "nothing to check"},
	} {
		t.Run(c.name, func(t *testing.T) {
			po, r := checkRun(t, c.cfg, c.o, c.args...)
			if r.State != stateUnknown || !strings.Contains(po.Text, c.want) {
				t.Fatalf("got %s - %s, want UNKNOWN with %q", po.State, po.Text, c.want)
			}
		})
	}
}

// Through the command line: the plugin's exit codes, replacing the rest of
// the CLI's for this command only, and nothing on stderr (Icinga 2 would
// show it). A scrub.max_age of ten years keeps the result from depending on
// the date the tests run.
func TestCheckExitCodes(t *testing.T) {
	cfg := writeConfig(t, "rules:\n  scrub:\n    max_age: 3650d\n")
	for _, c := range []struct {
		args []string
		code int
		line string
	}{
		{[]string{"--input", captured + "j3-scrubbed.zpool-status-j.json", captured + "j3-scrubbed.zpool-list-Hp.txt"}, 0, "ZWATCH OK - 1 pool ONLINE (tank), no alerts | tank_capacity=10%;80;90;0;100 "},
		{[]string{"--input", captured + "b1-offline.zpool-status-j.json"}, 1, "ZWATCH WARNING - pool vault is DEGRADED: "},
		{[]string{"--input", captured + "c4-missing.zpool-status-j.json"}, 2, "ZWATCH CRITICAL - pool vault is DEGRADED: "},
		{[]string{"--input", captured + "a.smartctl-a-ata.txt"}, 3, "ZWATCH UNKNOWN - rules eval a.smartctl-a-ata.txt: "},
		{[]string{"--no-such-flag"}, 3, "ZWATCH UNKNOWN - unknown flag: --no-such-flag (see zwatch check --help)\n"},
		{[]string{"-t"}, 3, "ZWATCH UNKNOWN - flag needs an argument: 't' in -t (see zwatch check --help)\n"},
	} {
		out, errOut, code := run(t, append([]string{"-c", cfg, "check"}, c.args...)...)
		if code != c.code || !strings.HasPrefix(out, c.line) || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, %q", c.args, code, out, errOut, c.code, c.line)
		}
	}
}

func TestParseCheckTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 7 * time.Second, "10": 10 * time.Second, "2.5s": 2500 * time.Millisecond, "1m": time.Minute} {
		if got, err := parseCheckTimeout(in, 7*time.Second); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	if got, _ := parseCheckTimeout("", 0); got != defaultCheckTimeout {
		t.Errorf("no -t and no config: %v", got)
	}
	for _, bad := range []string{"0", "-1", "ten", "10x"} {
		if _, err := parseCheckTimeout(bad, time.Second); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// An --input that never ends its read (a FIFO no one writes to) is
// UNKNOWN at the bound, not a hang.
func TestCheckInputThatBlocks(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	start := time.Now()
	po, r := checkRun(t, "", checkOptions{inputs: []string{fifo}, timeout: "1"})
	if r.State != stateUnknown || po.Text != "an --input FILE did not answer within 1s" || time.Since(start) > 2*time.Second {
		t.Fatalf("%s - %s after %s", po.State, po.Text, time.Since(start))
	}
	// Let the read that is still waiting end.
	if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
}

// The check reads a status without its files: the view must stay part of
// the status fact, or a renamed field would leave the check blind.
func TestStatusWithoutFilesIsPartOfTheStatus(t *testing.T) {
	if err := facts.CheckPart[statusWithoutFiles, facts.StatusData](); err != nil {
		t.Error(err)
	}
}
