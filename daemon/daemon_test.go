package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/notifiers"
)

const captured = "../testdata/captured/zfs-2.3.2/"

// standInZpool writes zpool and zfs stand-ins that replay real outputs
// captured from OpenZFS 2.3.2; the step file says which scenario step
// (a: healthy, b1-offline: one disk OFFLINE, b4-online: back ONLINE).
func standInZpool(t *testing.T, dir string) (zpool, zfsCmd, step string) {
	t.Helper()
	abs, err := filepath.Abs(captured)
	if err != nil {
		t.Fatal(err)
	}
	step = filepath.Join(dir, "step")
	script := fmt.Sprintf(`#!/bin/sh
s=$(cat %[1]q)
case "$*" in
"version") cat %[2]q/a.version.txt ;;
"list -Hp") cat %[2]q/$s.zpool-list-Hp.txt ;;
"status -j --json-int -p -P") cat %[2]q/$s.zpool-status-j.json ;;
"list -Hp -o name,used,avail,quota,refquota "*) shift 4; for n in "$@"; do awk -F '\t' -v n="$n" '$1 == n' %[2]q/$s.zfs-list-Hp.txt; done ;;
"list -H -o name") cut -f1 %[2]q/$s.zpool-list-Hp.txt ;;
"import") echo "no pools available to import" >&2; exit 1 ;;
*) echo "stand-in: unexpected argv: $*" >&2; exit 2 ;;
esac
`, step, abs)
	zpool = testutil.WriteScript(t, dir, "zpool", script)
	zfsCmd = testutil.WriteScript(t, dir, "zfs", script)
	setStep(t, step, "a")
	return zpool, zfsCmd, step
}

func setStep(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// TestSliceAlertFiresAndResolves is the first end-to-end slice: the real
// daemon with its embedded NATS server, collectors running a zpool stand-in
// that replays real outputs, the rule engine, and a webhook channel. A disk
// going OFFLINE fires an alert; coming back ONLINE resolves it.
func TestSliceAlertFiresAndResolves(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, step := standInZpool(t, dir)
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	// This machine has no ZFS module, so no arcstats: standInConfig
	// disables that true blind spot, which is not what this test is about.
	startDaemon(t, standInConfig(filepath.Join(dir, "state"), zpool, zfsCmd, ph.URL), Options{})

	time.Sleep(3 * time.Second) // healthy polls: nothing to say
	if n := ph.Count(func(notifiers.WebhookPayload) bool { return true }); n != 0 {
		t.Fatalf("healthy pool paged %d times: %+v", n, ph.Received())
	}
	setStep(t, step, "b1-offline")
	changed := time.Now()
	firing := ph.Wait(t, "firing", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && strings.Contains(p.Text+p.Summary, "vault")
	})
	// Default group_wait (10s) must not delay the first page of a quiet
	// group: one list poll (1s) plus the engine's tick (1s) at most.
	if d := time.Since(changed); d > 4*time.Second {
		t.Errorf("first page took %v after the disk went OFFLINE", d)
	}
	if !strings.Contains(firing.Summary+firing.Text, "OFFLINE") && !strings.Contains(firing.Summary+firing.Text, "DEGRADED") {
		t.Errorf("firing notification does not say what happened: %+v", firing)
	}
	setStep(t, step, "b4-online")
	ph.Wait(t, "resolved", func(p notifiers.WebhookPayload) bool { return p.Status == "resolved" })
	time.Sleep(2 * time.Second)
	if n := ph.Count(func(p notifiers.WebhookPayload) bool { return p.Status == "firing" }); n > 1 {
		t.Errorf("%d firing notifications for one incident, want 1", n)
	}
}
