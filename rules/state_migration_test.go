package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules/pipeline"
)

// legacyState reads legacyStateFixture: its bytes, and its keys as JSON.
func legacyState(t *testing.T) ([]byte, map[string]json.RawMessage) {
	t.Helper()
	data, err := os.ReadFile(legacyStateFixture)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		t.Fatal(err)
	}
	return data, keys
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// movedMemories is where each legacy key of a 41d2458 state is now: the
// JSON its memory holds that the key held.
func movedMemories(h *hostState) map[string]any {
	var scrubbed map[string]*scrubHistory
	if m := scrubMemory.peek(h); m != nil {
		scrubbed = m.Pools
	}
	return map[string]any{
		"arc_throttle_at": arcThrottleMemory.peek(h).throttledAt(),
		"hangs":           hangsMemory.peek(h),
		"slow_io":         slowIOMemory.peek(h),
		"seen_disks":      seenDisksMemory.peek(h).disks(),
		"zfs_version":     zfsVersionMemory.peek(h),
		"kernel":          kernelMemory.peek(h).disks(),
		"counters":        vdevErrorsMemory.peek(h).leaves(),
		"scrubs":          scrubbed,
		"capacity":        forecastMemory.peek(h).pools(),
	}
}

// sameAgain is the facts of the scenario's last minute again at at: the
// same pools, disks, versions and hung smartctl, an ARC that no longer
// throttles and a kernel log with nothing new.
func sameAgain(t *testing.T, at time.Time) []bus.Envelope {
	calm := 0.9
	return []bus.Envelope{
		heartbeatEnv(t, at),
		kstatEnv(t, "online", at),
		poolsEnv(t, scrubbedSlowPools(t, 51), at),
		capEnv(t, capturedList(t, "d1-scrubbed.zpool-list-Hp.txt"), nil, at),
		inventoryEnv(t, at, vaultDisk),
		envOf(t, facts.ZFSVersion.Name(), "zfs_version", at, facts.ZFSVersionData{Userland: "zfs-2.2.6-1", Kernel: "zfs-kmod-2.2.4-1", Source: "zfs version"}),
		envOf(t, facts.ARC.Name(), "arc", at, zfs.ARC{SizeBytes: 1 << 30, HitRatio: &calm, MemoryThrottleCount: 2}),
		timeoutEnv(t, "smart", "timeout", "/dev/sdb", at),
		kernelEnv(t, at),
	}
}

// continueScenario observes sameAgain every 15 s for five minutes after
// scenarioEnd and returns the notifications that came due.
func continueScenario(t *testing.T, e *Engine) []string {
	t.Helper()
	var notes []string
	for at := scenarioEnd.Add(15 * time.Second); !at.After(scenarioEnd.Add(5 * time.Minute)); at = at.Add(15 * time.Second) {
		for _, env := range sameAgain(t, at) {
			observe(t, e, env, at)
		}
		notes = append(notes, noteLines(e.Tick(at))...)
	}
	return notes
}

// sentAlerts describes every alert and whether and when it was sent.
func sentAlerts(h *hostState) map[string]string {
	out := map[string]string{}
	for fp, tr := range h.Alerts {
		sent := "never sent"
		if tr.LastSent != nil {
			sent = "sent " + tr.LastSent.UTC().Format(time.RFC3339) + " as " + string(tr.SentSeverity)
		}
		out[fp] = describe(tr.A) + " " + string(tr.A.State) + ", " + sent
	}
	return out
}

// A state saved by 41d2458 (compressed, as it stored it) loads with every
// alert as it was and every rule memory moved into its memory; the same
// facts again page nothing, as on an engine that never stopped, and no
// alert is lost.
func TestLegacyStateUpgradesWithoutForgettingOrPaging(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data, keys := legacyState(t)
	_, kv := openStateBucket(ctx, t)
	stored := append(append([]byte{}, s2Magic...), s2.Encode(nil, data)...)
	if _, err := kv.Put(ctx, stateKey(testHost), stored); err != nil {
		t.Fatal(err)
	}
	upgraded := newTestEngine()
	if err := upgraded.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	h := upgraded.hosts[testHost]
	if h == nil {
		t.Fatal("the saved state was not loaded")
	}
	// Each alert of a group gets the name of its incident (pipeline.IncidentID);
	// nothing else changes.
	loaded := map[string]tracked{}
	for fp, t0 := range h.Alerts {
		tr := *t0
		if tr.Group != "" && tr.A.Incident != pipeline.IncidentID(tr.Group) {
			t.Errorf("%s of group %s: incident %q", tr.A.Name, tr.Group, tr.A.Incident)
		}
		tr.A.Incident = ""
		loaded[fp] = tr
	}
	if !sameJSON(t, mustJSON(t, loaded), keys["alerts"]) {
		t.Errorf("alerts changed on load:\n%s\nwant\n%s", mustJSON(t, loaded), keys["alerts"])
	}
	for key, now := range movedMemories(h) {
		if !sameJSON(t, mustJSON(t, now), keys[key]) {
			t.Errorf("%s: the memory holds %s, want %s", key, mustJSON(t, now), keys[key])
		}
	}
	// The disks keep their identities; SmartCRC's count moved out of them
	// (TestLegacyCRCMovesIntoItsRule).
	keys["disks"] = withoutCRC(t, keys["disks"])
	for _, key := range []string{"known_pools", "forgotten_pools", "leaves", "disks", "collectors", "heartbeat", "flushed"} {
		if !sameJSON(t, keys[key], mustJSON(t, map[string]any{
			"known_pools": h.KnownPools, "forgotten_pools": h.Forgotten, "leaves": h.Leaves, "disks": h.Disks,
			"collectors": h.Collectors, "heartbeat": h.Heartbeat, "flushed": h.Flushed,
		}[key])) {
			t.Errorf("%s changed on load", key)
		}
	}
	before := sentAlerts(h)

	// The same facts: on the upgraded engine and on one that ran the
	// scenario itself, without a restart.
	if notes := continueScenario(t, upgraded); len(notes) != 0 {
		t.Errorf("the upgraded engine sent:\n%v", notes)
	}
	if after := sentAlerts(upgraded.hosts[testHost]); !reflect.DeepEqual(after, before) {
		t.Errorf("alerts after the same facts again:\n%v\nwant\n%v", after, before)
	}
	never := newTestEngine()
	stateScenario(t, never)
	if got := sentAlerts(never.hosts[testHost]); !reflect.DeepEqual(got, before) {
		t.Errorf("this engine, through the scenario that wrote the state, has\n%v\nwant\n%v", got, before)
	}
	if notes := continueScenario(t, never); len(notes) != 0 {
		t.Errorf("the engine that never stopped sent:\n%v", notes)
	}

	// Saved now, the memories are under memory alone, and read back.
	if err := upgraded.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}
	ent, err := kv.Get(ctx, stateKey(testHost))
	if err != nil {
		t.Fatal(err)
	}
	js, err := StateJSON(ent.Value())
	if err != nil {
		t.Fatal(err)
	}
	var saved map[string]json.RawMessage
	if err := json.Unmarshal(js, &saved); err != nil {
		t.Fatal(err)
	}
	for key := range movedMemories(h) {
		if _, ok := saved[key]; ok {
			t.Errorf("the legacy key %s is saved again", key)
		}
	}
	again := newTestEngine()
	if err := again.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	want := movedMemories(upgraded.hosts[testHost])
	for key, got := range movedMemories(again.hosts[testHost]) {
		if !sameJSON(t, mustJSON(t, got), mustJSON(t, want[key])) {
			t.Errorf("%s after a save and load: %s, want %s", key, mustJSON(t, got), mustJSON(t, want[key]))
		}
	}
	if got := sentAlerts(again.hosts[testHost]); !reflect.DeepEqual(got, sentAlerts(upgraded.hosts[testHost])) {
		t.Errorf("alerts after a save and load:\n%v", got)
	}
	for _, tr := range again.hosts[testHost].Alerts {
		if tr.A.State == alert.Firing && tr.LastSent == nil {
			t.Errorf("%s fires unsent after the upgrade", describe(tr.A))
		}
	}
}

// 41d2458 kept SmartCRC's count in the join's disk entry. The fixture's one
// disk had none (its SMART report shows no attribute 199), so this input is
// DERIVED from it: the same state with crc, crc_seen and crc_at set on that
// disk as 41d2458 wrote them. The count moves into SmartCRC's memory, the
// disk entry keeps its identity, and a save writes no old key.
func TestLegacyCRCMovesIntoItsRule(t *testing.T) {
	_, keys := legacyState(t)
	var disks map[string]map[string]any
	if err := json.Unmarshal(keys["disks"], &disks); err != nil {
		t.Fatal(err)
	}
	const serial = "MSK423Y20S3HBC"
	rose := time.Date(2026, 1, 10, 11, 58, 0, 0, time.UTC)
	disks[serial]["crc"], disks[serial]["crc_seen"], disks[serial]["crc_at"] = 7, true, rose
	raw, err := json.Marshal(disks)
	if err != nil {
		t.Fatal(err)
	}
	keys["disks"] = raw
	derived, err := json.Marshal(keys)
	if err != nil {
		t.Fatal(err)
	}
	h := decodeHost(derived)
	if h == nil {
		t.Fatal("the derived legacy state does not load")
	}
	link := smartCRCMemory.peek(h)
	if link == nil || link.Disks[serial] == nil || link.Disks[serial].Count != 7 || !link.Disks[serial].At.Equal(rose) {
		t.Fatalf("SmartCRC's memory after the upgrade: %+v", link)
	}
	if d := h.Disks[serial]; d == nil || d.Device != "/dev/sdc" || d.legacyCRC != nil {
		t.Fatalf("the disk entry after the upgrade: %+v", d)
	}
	saved, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var again map[string]json.RawMessage
	if err := json.Unmarshal(saved, &again); err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{`"crc_seen"`, `"crc_at"`} {
		if bytes.Contains(again["disks"], []byte(old)) {
			t.Errorf("the saved state still writes %s in its disks: %s", old, again["disks"])
		}
	}
	// Loaded again, it is the same memory, not migrated twice.
	h2 := decodeHost(saved)
	if l := smartCRCMemory.peek(h2); l == nil || l.Disks[serial].Count != 7 || !l.Disks[serial].At.Equal(rose) {
		t.Fatalf("SmartCRC's memory after a save and a load: %+v", l)
	}
}

// withoutCRC is a legacy disks map without SmartCRC's keys.
func withoutCRC(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var disks map[string]map[string]any
	if err := json.Unmarshal(raw, &disks); err != nil {
		t.Fatal(err)
	}
	for _, d := range disks {
		delete(d, "crc")
		delete(d, "crc_seen")
		delete(d, "crc_at")
	}
	return mustJSON(t, disks)
}
