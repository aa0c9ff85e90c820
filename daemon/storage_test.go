package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/notifiers"
)

// TestFullStateDiskStillPagesAndRecovers runs the daemon with its state on a
// small tmpfs that is filled while it runs: a disk going OFFLINE still
// reaches the webhook (sent directly, and marked so), StateStorageFull is
// paged with the path and the fix, systemd hears it is unhealthy and gets no
// watchdog ping; once the filler is deleted everything is back without a
// restart: the resolved notice and a new fault go through the outbox, and
// the page sent directly is not sent a second time.
func TestFullStateDiskStillPagesAndRecovers(t *testing.T) {
	// The smallest filesystem zwatch starts on with the default limits: the
	// store limit (bus.StoreLimit, 408 MiB) plus a quarter of spare.
	mnt := mountTmpfs(t, "600m")
	sd := listenNotify(t)
	dir := t.TempDir()
	zpool, zfsCmd, step := standInZpool(t, dir)
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	state := filepath.Join(mnt, "state")
	_, _ = startDaemon(t, standInConfig(state, zpool, zfsCmd, ph.URL), Options{HeartbeatEvery: time.Second})

	waitFor(t, 20*time.Second, "the first healthy status", func() bool {
		return contains(sd.since(time.Time{}), "STATUS=healthy")
	})
	filler := filepath.Join(mnt, "filler")
	fill(t, filler)
	filled := time.Now()

	setStep(t, step, "b1-offline")
	page := ph.Wait(t, "the OFFLINE page", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && mentions(p, "vault")
	})
	// Whether the outbox's own file met the full disk before this page
	// decides which way it went; either way it arrives once.
	t.Logf("fault paged %v after the disk filled (sent directly: %v)", time.Since(filled).Round(time.Millisecond), isDirect(page))
	full := ph.Wait(t, "StateStorageFull", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && mentions(p, "state storage full")
	})
	if !isDirect(full) {
		t.Errorf("StateStorageFull is not marked as sent directly: %s", full.Text)
	}
	for _, want := range []string{state, "free", "df -h"} {
		if !mentions(full, want) {
			t.Errorf("StateStorageFull does not name %q: %s\n%s", want, full.Summary, full.Text)
		}
	}
	waitFor(t, 15*time.Second, "systemd told the storage is failing", func() bool {
		return contains(sd.since(filled), "STATUS=UNHEALTHY: state storage")
	})
	quiet := time.Now()
	time.Sleep(3 * time.Second)
	if got := sd.since(quiet); contains(got, "WATCHDOG=1") || contains(got, "STATUS=healthy") {
		t.Errorf("watchdog fed while the storage fails: %v", got)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	ph.Wait(t, "storage works again, through the outbox", func(p notifiers.WebhookPayload) bool {
		return p.Status == "resolved" && mentions(p, "state storage works again") && !isDirect(p)
	})
	waitFor(t, 30*time.Second, "healthy again", func() bool { return contains(sd.since(freed), "STATUS=healthy") })
	t.Logf("healthy again %v after the filler was deleted", time.Since(freed).Round(time.Millisecond))

	setStep(t, step, "b4-online")
	ph.Wait(t, "the disk back ONLINE, through the outbox", func(p notifiers.WebhookPayload) bool {
		return p.Status == "resolved" && mentions(p, "vault") && !isDirect(p)
	})
	setStep(t, step, "b1-offline")
	ph.Wait(t, "a new OFFLINE page, through the outbox", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && mentions(p, "vault") && !isDirect(p)
	})
	time.Sleep(2 * time.Second)
	if n := ph.Count(func(p notifiers.WebhookPayload) bool { return p.ID == page.ID }); n != 1 {
		t.Errorf("the page sent during the failure (%s) arrived %d times, want once", page.ID, n)
	}
	if n := ph.Count(func(p notifiers.WebhookPayload) bool { return p.ID == full.ID }); n != 1 {
		t.Errorf("StateStorageFull (%s) arrived %d times, want once", full.ID, n)
	}
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func contains(msgs []string, prefix string) bool {
	for _, m := range msgs {
		if strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}
