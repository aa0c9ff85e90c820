package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
)

// faultState is a host's state with a real fault firing: the FreeBSD raidz1
// whose member is UNAVAIL (testdata), as the engine saves it.
func faultState(t *testing.T) *hostState {
	t.Helper()
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	e := NewEngine(cfg, nil)
	if err := e.Observe(statusEnv(t, "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt", t0), t0); err != nil {
		t.Fatal(err)
	}
	if f, _ := firingCount(e.Tick(t0)); f == 0 {
		t.Fatal("the fault did not page")
	}
	return e.hosts[testHost]
}

// A state is stored compressed, reads back the same, and a state written
// before compression (plain JSON) still reads.
func TestStateCodecRoundTrip(t *testing.T) {
	h := faultState(t)
	plain, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := encodeState(h)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stored, s2Magic) || len(stored)*2 > len(plain) {
		t.Fatalf("stored %d bytes for %d of JSON: want it compressed to under half", len(stored), len(plain))
	}
	t.Logf("state with %d alerts: %d bytes of JSON, %d stored", len(h.Alerts), len(plain), len(stored))
	for name, data := range map[string][]byte{"compressed": stored, "plain JSON (older zwatch)": plain} {
		got := decodeHost(data)
		if got == nil {
			t.Fatalf("%s: not read back", name)
		}
		again, _ := json.Marshal(got)
		if !bytes.Equal(again, plain) {
			t.Errorf("%s: read back differs:\n%s\nwant\n%s", name, again, plain)
		}
	}
	if host, hb, ok := HostHeartbeat(stored); !ok || host != testHost || (hb == nil) != (h.Heartbeat == nil) {
		t.Errorf("HostHeartbeat of the stored state: %q %v %v", host, hb, ok)
	}
	// A damaged entry is no state (alerts may re-fire once), never a panic
	// or an allocation of what its header claims.
	for name, data := range map[string][]byte{
		"truncated":   stored[:len(stored)/2],
		"huge claim":  append(append([]byte{}, s2Magic...), 0xff, 0xff, 0xff, 0xff, 0x7f),
		"magic alone": s2Magic,
	} {
		if got := decodeHost(data); got != nil {
			t.Errorf("%s: read as a state", name)
		}
	}
}

// Saving the same state twice writes once.
func TestSameStateIsNotWrittenAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, kv := openStateBucket(ctx, t)
	e := NewEngine(config.DefaultRules(), nil)
	e.hosts[testHost] = faultState(t)
	// saveMarked marks the state changed, saves, and reads back its revision.
	saveMarked := func() uint64 {
		t.Helper()
		e.hosts[testHost].dirty = true
		if err := e.Save(ctx, kv); err != nil {
			t.Fatal(err)
		}
		ent, err := kv.Get(ctx, stateKey(testHost))
		if err != nil {
			t.Fatal(err)
		}
		return ent.Revision()
	}
	first := saveMarked()
	second := saveMarked()
	if second != first {
		t.Fatalf("unchanged state written again: revision %d → %d", first, second)
	}
	if e.unsaved() || e.touched() {
		t.Fatal("still marked unsaved after a save that had nothing to write")
	}
}

// Facts that change nothing but when their collector was last heard from
// are acknowledged without a save; that bookkeeping is saved at most every
// touchSaveEvery, and when the engine stops. At the default intervals each
// zpool list used to rewrite the whole host state.
func TestBookkeepingFactsAreAckedWithoutASave(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, kv := openStateBucket(ctx, t)
	pools := statusPools(t, "zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt")
	// A pool 95 % full: PoolCapacity is re-evaluated on every zpool list,
	// to the same alert each time.
	full := []zfs.PoolList{{Name: "tank", Health: "ONLINE", SizeBytes: 1 << 40, AllocBytes: 1 << 40 / 100 * 95, CapacityPct: 95}}
	send := func(kind, collector string, at time.Time, data any) {
		t.Helper()
		msg, err := bus.Wrap(kind, testHost, collector, at, data)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, bus.Subject(testHost, kind), msg); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(at time.Time) {
		t.Helper()
		send(facts.ZpoolStatus.Name(), "zpool_status", at, facts.StatusData{Source: "text", Pools: pools})
		send(facts.ZpoolCapacity.Name(), "zpool_list", at, facts.CapacityData{Pools: full})
	}
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Run(runCtx, b, cfg, nil) }()

	start := time.Now()
	publish(start)
	waitAcked(ctx, t, b)
	settled := waitRevisionStill(ctx, t, kv, time.Second) // the page's save, and its flush
	last := start
	for i := 1; i <= 20; i++ {
		last = start.Add(time.Duration(i) * time.Second)
		publish(last)
	}
	waitAcked(ctx, t, b)
	if ent, err := kv.Get(ctx, stateKey(testHost)); err != nil || ent.Revision() != settled {
		t.Fatalf("40 unchanged facts: state revision %d → %v (err %v); want no write", settled, ent.Revision(), err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ent, err := kv.Get(ctx, stateKey(testHost))
	if err != nil {
		t.Fatal(err)
	}
	if ent.Revision() == settled {
		t.Fatal("stopping did not save the bookkeeping")
	}
	h := decodeHost(ent.Value())
	if h == nil || h.Collectors["zpool_status"] == nil || h.Collectors["zpool_status"].LastSeen == nil ||
		!h.Collectors["zpool_status"].LastSeen.Equal(last) {
		t.Fatalf("saved on stop: last heard from %v, want %v", h.Collectors["zpool_status"], last)
	}
}

func waitAcked(ctx context.Context, t *testing.T, b *bus.Bus) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := b.JS.Consumer(ctx, bus.StreamFacts, ConsumerName); err == nil {
			if info, err := c.Info(ctx); err == nil && info.NumAckPending == 0 && info.NumPending == 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("facts not acknowledged within 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRevisionStill waits until the host's state key has not changed for
// quiet and returns its revision.
func waitRevisionStill(ctx context.Context, t *testing.T, kv jetstream.KeyValue, quiet time.Duration) uint64 {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var rev uint64
	since := time.Now()
	for time.Now().Before(deadline) {
		if ent, err := kv.Get(ctx, stateKey(testHost)); err == nil && ent.Revision() != rev {
			rev, since = ent.Revision(), time.Now()
		}
		if rev != 0 && time.Since(since) >= quiet {
			return rev
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the host's state did not settle within 15 s")
	return 0
}

// FuzzDecodeHost: whatever the state bucket holds (damaged, truncated,
// written by another version), reading it never panics.
func FuzzDecodeHost(f *testing.F) {
	f.Add([]byte(`{"v":1,"host":"nas1"}`))
	f.Add(append(append([]byte{}, s2Magic...), 0x05, 0x10, 0x7b, 0x7d))
	f.Add(s2Magic)
	f.Fuzz(func(t *testing.T, data []byte) {
		if h := decodeHost(data); h != nil && h.Host == "" {
			t.Fatal("a state without a host")
		}
	})
}
