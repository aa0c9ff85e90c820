package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
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
	if e.Unsaved() || e.Touched() {
		t.Fatal("still marked unsaved after a save that had nothing to write")
	}
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
