package daemon

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"

	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/notifiers"
)

// TestDamagedConsumerStateIsRepairedAndPaged writes garbage into the rule
// engine's and the channel's consumer state (obs/rules/o.dat,
// obs/notify_phone/o.dat) of a stopped daemon and starts it again: each
// consumer is recreated, StateStorageFailed is paged naming it and what may
// be lost, heartbeat.url is not pinged before the repair, and a new fault
// is paged through the outbox.
func TestDamagedConsumerStateIsRepairedAndPaged(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, step := standInZpool(t, dir)
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	state := filepath.Join(dir, "state")

	var mu sync.Mutex
	var logs *syncBuf
	pings, early := 0, 0
	hc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		pings++
		if logs != nil && !strings.Contains(logs.String(), "rule engine's consumer was damaged and has been recreated") {
			early++
		}
	}))
	defer hc.Close()
	pinged := func() int { mu.Lock(); defer mu.Unlock(); return pings }
	cfg := standInConfig(state, zpool, zfsCmd, ph.URL) + "heartbeat: {url: " + hc.URL + ", interval: 10s}\n"

	_, stop := startDaemon(t, cfg, Options{HeartbeatEvery: time.Second})
	obs := func(stream, consumer string) string {
		return filepath.Join(state, "jetstream", "jetstream", "$G", "streams", stream, "obs", consumer, "o.dat")
	}
	files := []string{obs("ZWATCH_FACTS", "rules"), obs("ZWATCH_ALERTS", "notify_phone")}
	waitFor(t, 20*time.Second, "a healthy run with both consumers on disk", func() bool {
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				return false
			}
		}
		return pinged() > 0
	})
	time.Sleep(6 * time.Second) // the engine records its position every 5s
	stop()
	for _, f := range files {
		if err := os.WriteFile(f, []byte("this is not a consumer state file, it is garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	mu.Lock()
	pings = 0
	mu.Unlock()
	l2, _ := startDaemon(t, cfg, Options{HeartbeatEvery: time.Second})
	mu.Lock()
	logs = l2
	mu.Unlock()
	for _, c := range []string{"consumer rules of stream ZWATCH_FACTS", "consumer notify_phone of stream ZWATCH_ALERTS"} {
		p := ph.Wait(t, "StateStorageFailed for "+c, func(p notifiers.WebhookPayload) bool {
			return p.Status == "firing" && mentions(p, "damaged state store found and repaired") && mentions(p, c)
		})
		if !mentions(p, "lost") {
			t.Errorf("the page does not say what may be lost: %s", p.Text)
		}
	}
	waitFor(t, 20*time.Second, "a heartbeat URL ping after the repair", func() bool { return pinged() > 0 })
	mu.Lock()
	if early > 0 {
		t.Errorf("heartbeat.url pinged %d times before the rule engine's consumer was repaired", early)
	}
	mu.Unlock()

	setStep(t, step, "b1-offline")
	ph.Wait(t, "the OFFLINE page through the outbox", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && mentions(p, "vault") && !isDirect(p)
	})
}

// TestDamagedOutboxBlockIsRepairedAndPaged overwrites the start of the
// outbox's message block of a stopped daemon: on start the lost messages
// are found (the channel's consumer had read past what the stream still
// holds), the stream continues after them so new alerts are not skipped,
// StateStorageFailed says what was lost, and a new fault is delivered.
func TestDamagedOutboxBlockIsRepairedAndPaged(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, step := standInZpool(t, dir)
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	state := filepath.Join(dir, "state")
	cfg := standInConfig(state, zpool, zfsCmd, ph.URL)

	_, stop := startDaemon(t, cfg, Options{HeartbeatEvery: time.Second})
	setStep(t, step, "b1-offline")
	ph.Wait(t, "the OFFLINE page", func(p notifiers.WebhookPayload) bool { return p.Status == "firing" && mentions(p, "vault") })
	setStep(t, step, "b4-online")
	ph.Wait(t, "the resolved notice", func(p notifiers.WebhookPayload) bool { return p.Status == "resolved" && mentions(p, "vault") })
	time.Sleep(2 * time.Second)
	stop()
	damageBlocks(t, state, "ZWATCH_ALERTS")

	seen := map[string]bool{}
	for _, p := range ph.Received() {
		seen[p.ID] = true
	}
	startDaemon(t, cfg, Options{HeartbeatEvery: time.Second})
	p := ph.Wait(t, "StateStorageFailed for the outbox", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && mentions(p, "damaged state store found and repaired") && mentions(p, "stream ZWATCH_ALERTS lost")
	})
	if len(p.Notification.Alerts) > 0 {
		t.Logf("paged: %s", p.Notification.Alerts[0].Description)
	}
	setStep(t, step, "b1-offline")
	ph.Wait(t, "a new OFFLINE page after the repair", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && mentions(p, "vault") && !seen[p.ID]
	})
}

// A damaged block of the rule state bucket: the server still counts the
// host's key but cannot return it, so every revision-checked save failed
// and the engine reloaded once a second for ever. Now it writes its state
// from memory after a few conflicts, pages the damage once, and carries on.
func TestDamagedStateBucketIsPaged(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, step := standInZpool(t, dir)
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)
	state := filepath.Join(dir, "state")
	cfg := standInConfig(state, zpool, zfsCmd, ph.URL)

	_, stop := startDaemon(t, cfg, Options{HeartbeatEvery: time.Second})
	setStep(t, step, "b1-offline")
	ph.Wait(t, "the OFFLINE page", func(p notifiers.WebhookPayload) bool { return p.Status == "firing" && mentions(p, "vault") })
	time.Sleep(2 * time.Second)
	stop()
	damageBlocks(t, state, "KV_"+bus.StateBucket)
	logs, _ := startDaemon(t, cfg, Options{HeartbeatEvery: time.Second})
	ph.Wait(t, "StateStorageFailed for the state bucket", func(p notifiers.WebhookPayload) bool {
		return p.Status == "firing" && mentions(p, "damaged state store found and repaired") && mentions(p, "rule state could not be read back")
	})
	time.Sleep(3 * time.Second)
	if n := strings.Count(logs.String(), "state changed by another engine"); n > maxConflictsSeen {
		t.Errorf("the engine still reloads after the repair: %d conflicts logged", n)
	}
	n := 0
	for _, p := range ph.Received() {
		if mentions(p, "rule state could not be read back") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the damage was paged %d times, want once", n)
	}
}

// maxConflictsSeen bounds the conflicts logged before the engine decides
// the entry is damaged (rules.maxConflicts, with the tick's own tries).
const maxConflictsSeen = 10

// damageBlocks overwrites the start of every message block of stream in
// the embedded store under state, as a torn write or bad sector would.
func damageBlocks(t *testing.T, state, stream string) {
	t.Helper()
	blocks, err := filepath.Glob(filepath.Join(state, "jetstream", "jetstream", "*", "streams", stream, "msgs", "*.blk"))
	if err != nil || len(blocks) == 0 {
		t.Fatalf("no message block of %s: %v", stream, err)
	}
	for _, blk := range blocks {
		f, err := os.OpenFile(blk, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(strings.Repeat("X", 64)), 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}
