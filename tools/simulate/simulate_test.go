package simulate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
)

// userConfig is a person's config: a webhook channel with the default
// min_severity (warning) and the default rules (group_wait 10s, a bus URL
// and a state dir that must not be used).
func userConfig(t *testing.T, url string) config.Config {
	t.Helper()
	l, err := config.Parse(strings.NewReader(fmt.Sprintf(`
host: nas1
state_dir: /nonexistent/zwatch-state-must-not-be-used
heartbeat:
  url: http://127.0.0.1:1/must-not-be-pinged
notify:
  console: false
  channels:
    - name: phone
      type: webhook
      url: %s
`, url)), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	return l.Config
}

// expectation is what a person's phone must show for one scenario.
type expectation struct {
	// firing lists, in order, words the firing notifications' summaries
	// must contain (each in its own notification).
	firing [][]string
	// never lists words no firing notification may contain: a routine
	// resilver is an info notice, which the default min_severity holds back.
	never []string
}

var expected = map[string]expectation{
	"disk-replaced":   {firing: [][]string{{"[WARNING]", "vault is DEGRADED", "scsi-35000c500a0000001", "REMOVED"}}, never: []string{"resilver"}},
	"disk-offline":    {firing: [][]string{{"[WARNING]", "vault is DEGRADED", "virtio-ZWV0001", "OFFLINE"}}, never: []string{"resilver"}},
	"pool-full":       {firing: [][]string{{"[WARNING]", "pool vault is 85% full"}, {"[CRITICAL]", "pool vault is 93% full"}}},
	"pending-sectors": {firing: [][]string{{"[WARNING]", "9RK1XXXX", "8 pending sectors"}, {"[CRITICAL]", "9RK1XXXX", "24 pending sectors"}}},
}

// trapTools puts zpool, zfs and smartctl first on PATH that record being
// run: a simulation must never run whatever PATH finds.
func trapTools(t *testing.T) (ran string) {
	t.Helper()
	dir := t.TempDir()
	ran = filepath.Join(dir, "ran")
	for _, tool := range []string{"zpool", "zfs", "smartctl"} {
		script := fmt.Sprintf("#!/bin/sh\necho \"%s $*\" >> %s\nexit 1\n", tool, shQuote(ran))
		testutil.WriteScript(t, dir, tool, script)
	}
	testutil.PrependPath(t, dir)
	return ran
}

// TestScenariosEndToEnd runs every scenario at high speed through the real
// daemon (embedded NATS, collectors, rules, outbox) to a webhook channel and
// checks what the person's phone gets: each firing notification once with
// the right summary, and a resolved one at the end.
func TestScenariosEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	ran := trapTools(t)
	all, err := List()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			want, ok := expected[sc.Name]
			if !ok {
				t.Fatalf("scenario %s has no expectation in this test: add one", sc.Name)
			}
			ph := testutil.NewPhone[notifiers.WebhookPayload](t)
			parent := t.TempDir()
			var narration bytes.Buffer
			var warned lockedBuf
			start := time.Now()
			res, err := Run(context.Background(), userConfig(t, ph.URL), sc, Options{
				Speed: 100, Out: &narration, TempDir: parent,
				Log: slog.New(slog.NewTextHandler(io.MultiWriter(testWriter{t}, &warned), &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, narration.String())
			}
			t.Logf("%s took %s", sc.Name, time.Since(start).Round(time.Millisecond))

			if _, err := os.Stat(res.WorkDir); !os.IsNotExist(err) {
				t.Errorf("temporary directory %s not removed: %v", res.WorkDir, err)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("left behind in the temp dir: %v", left)
			}

			got := ph.Received()
			var summaries []string
			for _, p := range got {
				summaries = append(summaries, p.Status+" "+p.Summary)
			}
			t.Logf("phone got:\n  %s", strings.Join(summaries, "\n  "))
			if len(got) == 0 {
				t.Fatalf("the phone got nothing; narration:\n%s", narration.String())
			}
			seenID := map[string]bool{}
			seenSummary := map[string]bool{}
			var firing []notifiers.WebhookPayload
			for _, p := range got {
				if p.Host != "simulated-nas1" || !p.Test || !strings.HasPrefix(p.Summary, "[TEST] ") {
					t.Errorf("notification host %q test %v summary %q: the person must be able to tell a rehearsal", p.Host, p.Test, p.Summary)
				}
				if seenID[p.ID] {
					t.Errorf("notification %s delivered twice", p.ID)
				}
				seenID[p.ID] = true
				if seenSummary[p.Status+p.Summary] {
					t.Errorf("duplicate notification %q", p.Summary)
				}
				seenSummary[p.Status+p.Summary] = true
				if p.Status == "firing" {
					firing = append(firing, p)
				}
			}
			for _, p := range firing {
				for _, w := range want.never {
					if strings.Contains(p.Summary, w) {
						t.Errorf("firing notification %q: %q must not page", p.Summary, w)
					}
				}
			}
			i := 0
			for _, words := range want.firing {
				for i < len(firing) && !containsAll(firing[i].Summary, words) {
					i++
				}
				if i == len(firing) {
					t.Errorf("no firing notification (in order) with %q; got %q", words, summaries)
					break
				}
				i++
			}
			// A rehearsal says nothing alarming in the log: the collectors
			// the stand-ins do not replay do not run (they failed and said
			// so before, or read this machine into the simulated host).
			if w := warned.String(); w != "" {
				t.Errorf("the simulation logged warnings:\n%s", w)
			}
			// A resolved notice names only alerts a page named before it:
			// its "(+N more)" is never more than the page's.
			paged := map[string]bool{}
			for _, p := range got {
				for _, a := range p.Notification.Alerts {
					if p.Status == "firing" && a.State == alert.Firing {
						paged[a.Fingerprint] = true
					}
					if a.State == alert.Resolved && !paged[a.Fingerprint] {
						t.Errorf("%q resolves %s (%s), which no page named", p.Summary, a.Name, a.Summary)
					}
				}
			}
			if last := got[len(got)-1]; last.Status != "resolved" || !strings.HasPrefix(last.Summary, "[TEST] [RESOLVED]") {
				t.Errorf("last notification is %s %q, want everything resolved at the end", last.Status, last.Summary)
			}
			// The result also lists what the channel's min_severity (warning) held back.
			if len(res.Notifications) < len(got) {
				t.Errorf("result lists %d notifications, the phone got %d", len(res.Notifications), len(got))
			}
			// Its page is on a port of its own: the person's zwatch may
			// be serving http.listen (a clash restarted the listener every
			// second, logging an error each time).
			if !strings.Contains(narration.String(), "Its status page, while it runs: http://127.0.0.1:") ||
				strings.Contains(narration.String(), config.DefaultHTTPListen) {
				t.Errorf("narration does not give the simulation's own page:\n%s", narration.String())
			}
			if !strings.Contains(narration.String(), fmt.Sprintf("[%d/%d]", len(sc.Steps), len(sc.Steps))) {
				t.Errorf("narration does not reach the last step:\n%s", narration.String())
			}
		})
	}
	if data, err := os.ReadFile(ran); err == nil {
		t.Errorf("a real tool from PATH was run:\n%s", data)
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// lockedBuf keeps what the daemon's goroutines log.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestConfigureIsolates checks that nothing of the simulated config points
// at the real machine's tools, state or monitoring.
func TestConfigureIsolates(t *testing.T) {
	sc, err := Lookup("pending-sectors")
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorkDir(t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	defer w.remove()
	user := userConfig(t, "http://127.0.0.1:1/hook")
	user.Bus.URL = "nats://real-bus:4222"
	user.Rules.For = map[string]config.Duration{"PoolCapacity": config.Duration(15 * time.Minute), "ScrubOverdue": config.Duration(2 * time.Hour)}
	user.Smart.Devices = []config.SmartDevice{{Device: "/dev/sda"}}
	c := configure(user, sc, w, timingFor(Options{}, user.Rules.GroupWait.D()))

	if c.Host != "simulated-nas1" {
		t.Errorf("host %q", c.Host)
	}
	if !strings.HasPrefix(c.StateDir, w.root) {
		t.Errorf("state dir %s is not in the temporary directory %s", c.StateDir, w.root)
	}
	if c.Bus.URL != "" || c.Bus.Listen != "" {
		t.Errorf("bus not isolated: %+v", c.Bus)
	}
	if c.Heartbeat.URL != "" {
		t.Errorf("heartbeat URL kept: %s", c.Heartbeat.URL)
	}
	if c.Maintenance.Scrub != "" || c.Maintenance.ShortTest != "" || c.Maintenance.LongTest != "" {
		t.Errorf("maintenance kept: %+v", c.Maintenance)
	}
	for _, p := range []string{c.ZFS.Zpool, c.ZFS.Zfs, c.Smart.Smartctl} {
		if !filepath.IsAbs(p) || !strings.HasPrefix(p, w.root) {
			t.Errorf("tool %s is not an absolute stand-in path in %s", p, w.root)
		}
	}
	if len(c.Smart.Devices) != 1 || c.Smart.Devices[0].Device != "/dev/disk/by-id/ata-WDC_WD140EDFZ-11A0VA0_9RK1XXXX" {
		t.Errorf("SMART devices not the recorded ones: %+v", c.Smart.Devices)
	}
	if c.ZFS.FollowEvents {
		t.Error("zpool events followed")
	}
	if d, ok := c.Rules.For["PoolCapacity"]; !ok || d != 0 {
		t.Errorf("PoolCapacity hold %v, want 0 in a compressed replay", d)
	}
	if d := c.Rules.For["ScrubOverdue"]; d.D() != 2*time.Hour {
		t.Errorf("a hold over an hour was changed: %v", d)
	}
	if _, ok := c.Rules.For["ScrubNever"]; ok {
		t.Error("ScrubNever's 24h default hold overridden")
	}
	if c.Rules.GroupWait.D() > time.Second {
		t.Errorf("group_wait %v not compressed", c.Rules.GroupWait.D())
	}
	if user.Rules.For["PoolCapacity"].D() != 15*time.Minute || user.Smart.Devices[0].Device != "/dev/sda" {
		t.Error("the person's config was modified")
	}
}

// TestStandInsReplay runs the stand-ins the way the collectors do.
func TestStandInsReplay(t *testing.T) {
	sc, err := Lookup("disk-offline")
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorkDir(t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	defer w.remove()
	run := func(tool string, args ...string) (string, error) {
		out, err := execCommand(tool, args...)
		return string(out), err
	}
	out, err := run(w.zpool, "list", "-Hp")
	want, _ := fs.ReadFile(recordings, "scenarios/zfs-2.3.2/a.zpool-list-Hp.txt")
	if err != nil || out != string(want) {
		t.Fatalf("zpool list -Hp at step 1: %v\n%s", err, out)
	}
	if err := w.setStep(3); err != nil { // b3 has no zpool list: b2's carries over
		t.Fatal(err)
	}
	out, err = run(w.zpool, "list", "-Hp")
	want, _ = fs.ReadFile(recordings, "scenarios/zfs-2.3.2/b2-resilvering.zpool-list-Hp.txt")
	if err != nil || out != string(want) {
		t.Fatalf("zpool list -Hp at step 4: %v\n%s", err, out)
	}
	if _, err := run(w.zpool, "scrub", "vault"); err == nil {
		t.Error("the zpool stand-in accepted `zpool scrub`")
	}
	if _, err := run(w.zpool, "offline", "vault", "virtio-ZWV0001"); err == nil {
		t.Error("the zpool stand-in accepted `zpool offline`")
	}

	sc, _ = Lookup("pending-sectors")
	w2, err := newWorkDir(t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.remove()
	if err := w2.setStep(2); err != nil {
		t.Fatal(err)
	}
	out, err = run(w2.smartctl, "--json=c", "-a", "-n", "standby", "/dev/disk/by-id/ata-WDC_WD140EDFZ-11A0VA0_9RK1XXXX")
	if err != nil || !strings.Contains(out, `"string": "24"`) {
		t.Fatalf("smartctl at step 3: %v", err)
	}
	if _, err := run(w2.smartctl, "-t", "long", "/dev/disk/by-id/ata-WDC_WD140EDFZ-11A0VA0_9RK1XXXX"); err == nil {
		t.Error("the smartctl stand-in accepted a self-test")
	}
}

// TestRecordingsAreVerbatim checks that the embedded real recordings are
// byte for byte the captures in testdata, and that the derived SMART files
// differ from their real base only in attribute 197's raw value.
func TestRecordingsAreVerbatim(t *testing.T) {
	originals := map[string]string{
		"scenarios/zfs-2.3.2":                                "../../testdata/captured/zfs-2.3.2",
		"scenarios/smartctl/sata-hdd-wd140edfz-healthy.json": "../../testdata/smartctl/sata-hdd-wd140edfz-healthy.json",
	}
	checked := 0
	for emb, src := range originals {
		err := fs.WalkDir(recordings, emb, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") {
				return err
			}
			orig := src
			if p != emb {
				orig = filepath.Join(src, strings.TrimPrefix(p, emb+"/"))
			}
			want, err := os.ReadFile(orig)
			if err != nil {
				t.Errorf("%s: no original at %s: %v", p, orig, err)
				return nil
			}
			got, _ := fs.ReadFile(recordings, p)
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the real recording %s", p, orig)
			}
			checked++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 10 {
		t.Errorf("only %d recordings checked", checked)
	}

	base, _ := fs.ReadFile(recordings, "scenarios/smartctl/sata-hdd-wd140edfz-healthy.json")
	bl := strings.Split(string(base), "\n")
	derived, _ := fs.Glob(recordings, "scenarios/derived/*.json")
	if len(derived) == 0 {
		t.Fatal("no derived recordings")
	}
	for _, p := range derived {
		data, _ := fs.ReadFile(recordings, p)
		dl := strings.Split(string(data), "\n")
		if len(dl) != len(bl) {
			t.Errorf("%s: %d lines, its base has %d", p, len(dl), len(bl))
			continue
		}
		for i := range bl {
			if bl[i] == dl[i] {
				continue
			}
			// Only lines 471/472: attribute 197 Current_Pending_Sector's raw value and string.
			if i != 470 && i != 471 || !strings.Contains(bl[453], `"id": 197`) {
				t.Errorf("%s line %d differs from the real base: %q -> %q", path.Base(p), i+1, bl[i], dl[i])
			}
		}
	}
}

// TestDerivedCapacityRecordings checks that the derived zpool list outputs
// differ from the real step-a capture only in vault's alloc, free and cap.
func TestDerivedCapacityRecordings(t *testing.T) {
	base, err := fs.ReadFile(recordings, "scenarios/zfs-2.3.2/a.zpool-list-Hp.txt")
	if err != nil {
		t.Fatal(err)
	}
	bl := strings.Split(string(base), "\n")
	derived, _ := fs.Glob(recordings, "scenarios/derived/*.zpool-list-Hp.txt")
	if len(derived) == 0 {
		t.Fatal("no derived zpool list recordings")
	}
	for _, p := range derived {
		data, _ := fs.ReadFile(recordings, p)
		dl := strings.Split(string(data), "\n")
		if len(dl) != len(bl) {
			t.Fatalf("%s: %d lines, its base has %d", p, len(dl), len(bl))
		}
		for i := range bl {
			if bl[i] == dl[i] {
				continue
			}
			bf, df := strings.Split(bl[i], "\t"), strings.Split(dl[i], "\t")
			if len(bf) != len(df) || bf[0] != "vault" {
				t.Errorf("%s line %d: %q -> %q", p, i+1, bl[i], dl[i])
				continue
			}
			for j := range bf {
				// Columns: name size alloc free ckpoint expandsz frag cap dedup health altroot.
				if bf[j] != df[j] && j != 2 && j != 3 && j != 7 {
					t.Errorf("%s: column %d changed: %q -> %q", p, j+1, bf[j], df[j])
				}
			}
		}
	}
}

// TestListAndLookup checks the manifest: every scenario loads and is one line.
func TestListAndLookup(t *testing.T) {
	all, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 3 {
		t.Fatalf("%d scenarios", len(all))
	}
	for _, s := range all {
		if strings.Contains(s.Description+s.Origin, "\n") {
			t.Errorf("%s: description or origin is not one line", s.Name)
		}
	}
	if _, err := Lookup("no-such"); err == nil || !strings.Contains(err.Error(), "disk-offline") {
		t.Errorf("Lookup of an unknown name: %v", err)
	}
}

func execCommand(tool string, args ...string) ([]byte, error) {
	return exec.Command(tool, args...).Output()
}
