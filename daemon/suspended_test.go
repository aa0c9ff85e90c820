package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/notifiers"
)

const kstatCaptured = "../testdata/kstat/zfs-2.3.2/"

// hangingZpool is standInZpool that, once the file hang exists, hangs in
// every zpool call and notes when the first hanging call began.
func hangingZpool(t *testing.T, dir string) (zpool, zfsCmd, hang string) {
	t.Helper()
	abs, err := filepath.Abs(captured)
	if err != nil {
		t.Fatal(err)
	}
	hang = filepath.Join(dir, "hang")
	script := fmt.Sprintf(`#!/bin/sh
if [ -e %[1]q ]; then
  [ -e %[1]q.began ] || date +%%s%%N > %[1]q.began
  exec sleep 600
fi
case "$*" in
"list -Hp") cat %[2]q/a.zpool-list-Hp.txt ;;
"status -j --json-int -p -P") cat %[2]q/a.zpool-status-j.json ;;
"list -Hp -o name,used,avail,quota,refquota") cat %[2]q/a.zfs-list-Hp.txt ;;
*) echo "stand-in: unexpected argv: $*" >&2; exit 2 ;;
esac
`, hang, abs)
	zpool = testutil.WriteScript(t, dir, "zpool", script)
	zfsCmd = testutil.WriteScript(t, dir, "zfs", script)
	return zpool, zfsCmd, hang
}

// writeKstat writes a captured pool state file into the kstat root.
func writeKstat(t *testing.T, root, capture, pool string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(kstatCaptured, capture, pool, "state"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, pool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, pool, "state.tmp"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, pool, "state.tmp"), filepath.Join(root, pool, "state")); err != nil {
		t.Fatal(err)
	}
}

// runHangingDaemon starts the daemon with the zpool stand-in and the kstat
// collector reading root; kstat and list run only at start and when poked
// (their interval is an hour), so what pages after the hang came through
// the timeout's probe.
func runHangingDaemon(t *testing.T, dir, zpool, zfsCmd, root string, timeout time.Duration, phone string) {
	cfgText := fmt.Sprintf(`
host: nas1
state_dir: %s
zfs:
  zpool: %s
  zfs: %s
  command_timeout: %s
  list_interval: 1h
  status_interval: 2s
  follow_events: false
smart:
  enabled: false
rules:
  disabled: [MonitoringBlindSpot]
notify:
  console: false
  channels:
    - name: phone
      type: webhook
      url: %s
      min_severity: info
`, filepath.Join(dir, "state"), zpool, zfsCmd, timeout, phone)
	table := collectors.Table()
	for i := range table {
		if table[i].Name == "pool_kstat" {
			table[i].Poll = func(collectors.Env) collectors.Collector { return &collectors.PoolKstat{Root: root} }
		}
	}
	startDaemon(t, cfgText, Options{Collectors: table})
}

func hangBegan(t *testing.T, hang string) time.Time {
	t.Helper()
	b, err := os.ReadFile(hang + ".began")
	if err != nil {
		t.Fatalf("the stand-in never hung: %v", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, ns)
}

// A zpool that hangs while the kernel says SUSPENDED: the first timeout
// probes the kstat, and the one page, PoolSuspended, arrives within the
// command timeout plus 10 s of the hang's start (not after three status
// intervals); the hung zpool and the data errors are folded into it.
func TestHungZpoolSuspendedPoolPagesWithinTimeout(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, hang := hangingZpool(t, dir)
	root := filepath.Join(dir, "kstat")
	writeKstat(t, root, "online", "hung")
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	const timeout = 3 * time.Second
	runHangingDaemon(t, dir, zpool, zfsCmd, root, timeout, ph.URL)

	time.Sleep(3 * time.Second) // healthy polls
	if n := ph.Count(func(notifiers.WebhookPayload) bool { return true }); n != 0 {
		t.Fatalf("healthy pools paged %d times: %+v", n, ph.Received())
	}
	writeKstat(t, root, "suspended", "hung")
	if err := os.WriteFile(hang, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	page := ph.Wait(t, "PoolSuspended", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && strings.Contains(p.Summary+p.Text, "pool hung is SUSPENDED")
	})
	took := time.Since(hangBegan(t, hang))
	t.Logf("hang -> PoolSuspended page: %s (command timeout %s)", took.Round(10*time.Millisecond), timeout)
	if took > timeout+10*time.Second {
		t.Errorf("page took %s after the hang began, want within %s", took, timeout+10*time.Second)
	}
	for _, want := range []string{"zpool clear hung", "zpool status -v hung"} {
		if !strings.Contains(page.Text, want) {
			t.Errorf("page does not say %q:\n%s", want, page.Text)
		}
	}
	time.Sleep(2 * timeout) // the retries time out too: nothing else pages
	for _, p := range ph.Received() {
		if p.Status == "firing" && !strings.Contains(p.Summary+p.Text, "SUSPENDED") {
			t.Errorf("a second page beside PoolSuspended: %s", p.Summary)
		}
	}
}

// A zpool that hangs with every pool ONLINE in the kernel (a dead
// controller, a held lock): the first timeout retries status and runs
// zpool list, which hangs too, and that confirms CommandHangs within the
// command timeout plus 10 s.
func TestHungZpoolPagesCommandHangsWithinTimeout(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, hang := hangingZpool(t, dir)
	root := filepath.Join(dir, "kstat")
	writeKstat(t, root, "online", "hung")
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	const timeout = 2 * time.Second
	runHangingDaemon(t, dir, zpool, zfsCmd, root, timeout, ph.URL)
	time.Sleep(3 * time.Second)
	if err := os.WriteFile(hang, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ph.Wait(t, "CommandHangs", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && strings.Contains(p.Summary+p.Text, "zpool hangs")
	})
	took := time.Since(hangBegan(t, hang))
	t.Logf("hang -> CommandHangs page: %s (command timeout %s)", took.Round(10*time.Millisecond), timeout)
	if took > timeout+10*time.Second {
		t.Errorf("page took %s after the hang began, want within %s", took, timeout+10*time.Second)
	}
}
