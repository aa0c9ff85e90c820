package rules

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tally is a memory of the tests here; its version 2 counts what version
// 1 called N.
type tally struct {
	Count int `json:"count"`
}

var tallyMemory = remember("tally", 2, func(version int, saved json.RawMessage) (*tally, error) {
	var old struct {
		N int `json:"n"`
	}
	if version != 1 {
		return nil, fmt.Errorf("tally version %d", version)
	}
	err := json.Unmarshal(saved, &old)
	return &tally{Count: old.N}, err
})

// savedWith is a host state whose memory holds one saved entry.
func savedWith(t *testing.T, name string, version int, data string) *hostState {
	t.Helper()
	js := fmt.Sprintf(`{"v":%d,"host":%q,"memory":{%q:{"v":%d,"data":%s}}}`, stateVersion, testHost, name, version, data)
	h := decodeHost([]byte(js))
	if h == nil {
		t.Fatalf("not read: %s", js)
	}
	return h
}

// peek makes nothing; of makes the memory once and keeps it; a save and
// load gives it back.
func TestMemoryMadeOnFirstUse(t *testing.T) {
	h := newHostState(testHost)
	if tallyMemory.peek(h) != nil || len(h.Memory) != 0 {
		t.Fatal("peek made a memory")
	}
	tallyMemory.of(h).Count++
	tallyMemory.of(h).Count++
	if got := tallyMemory.peek(h); got == nil || got.Count != 2 {
		t.Fatalf("tally %+v, want 2", got)
	}
	data, err := encodeState(h)
	if err != nil {
		t.Fatal(err)
	}
	back := decodeHost(data)
	if got := tallyMemory.peek(back); got == nil || got.Count != 2 {
		t.Fatalf("after a save and load: %+v", got)
	}
	if !strings.Contains(string(mustJSON(t, back)), `"memory":{"tally":{"v":2,"data":{"count":2}}}`) {
		t.Errorf("saved as %s", mustJSON(t, back))
	}
}

// An entry of an older version is migrated by its owner; one it cannot
// read, of a newer version or damaged, is dropped: forgotten, not misread.
func TestMemoryVersions(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		data    string
		want    *tally
	}{
		{"current", 2, `{"count":7}`, &tally{Count: 7}},
		{"older, migrated", 1, `{"n":7}`, &tally{Count: 7}},
		{"older than the migration reads", 0, `{"n":7}`, nil},
		{"newer", 3, `{"count":7,"since":"2026-01-01T00:00:00Z"}`, nil},
		{"damaged", 2, `["count"]`, nil},
	} {
		h := savedWith(t, "tally", c.version, c.data)
		got := tallyMemory.peek(h)
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if c.want == nil && h.Memory["tally"] != nil {
			t.Errorf("%s: the entry is kept", c.name)
		}
		if c.want != nil && h.Memory["tally"].Version != 2 {
			t.Errorf("%s: kept as version %d", c.name, h.Memory["tally"].Version)
		}
	}
}

// A memory of another type under the same name reads nothing (the
// catalogue must not have two: TestCatalogueMemoriesNamedOnce).
func TestMemoryOfAnotherType(t *testing.T) {
	h := newHostState(testHost)
	tallyMemory.of(h).Count = 3
	other := remember[struct{ Count string }]("tally", 2, nil)
	if other.peek(h) != nil {
		t.Error("a memory of another type read the tally")
	}
}

// Each memory of the catalogue has a name of its own.
func TestCatalogueMemoriesNamedOnce(t *testing.T) {
	defs := map[string]memoryDef{}
	for _, r := range Catalogue() {
		for _, m := range r.Memory {
			if d, ok := defs[m.memoryName()]; ok && d != m {
				t.Errorf("two memories are named %s", m.memoryName())
			}
			defs[m.memoryName()] = m
		}
	}
}

// Every legacy key goes to a memory of the catalogue.
func TestLegacyKeysHaveOwners(t *testing.T) {
	var l legacyMemory
	if n := reflect.TypeOf(l).NumField(); len(l.keys()) != n {
		t.Errorf("%d legacy keys moved, of %d", len(l.keys()), n)
	}
	owned := memoryNames(Catalogue())
	for _, k := range l.keys() {
		if !owned[k.owner.memoryName()] {
			t.Errorf("no rule of the catalogue lists %s", k.owner.memoryName())
		}
	}
}

// A loaded state keeps only the memories its engine's catalogue lists.
func TestMemoryUnownedDroppedOnLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, kv := openStateBucket(ctx, t)
	h := newHostState(testHost)
	tallyMemory.of(h).Count = 1
	zfsVersionMemory.of(h).Userland = "zfs-2.3.2-1"
	data, err := encodeState(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, stateKey(testHost), data); err != nil {
		t.Fatal(err)
	}
	e := newTestEngine()
	if err := e.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	loaded := e.hosts[testHost]
	if _, ok := loaded.Memory["tally"]; ok {
		t.Error("a memory no rule of the catalogue lists was kept")
	}
	if v := zfsVersionMemory.peek(loaded); v == nil || v.Userland != "zfs-2.3.2-1" {
		t.Errorf("the catalogue's own memory: %+v", v)
	}
}

// A legacy key goes to its memory unless the state has that memory too.
func TestLegacyKeyYieldsToMemory(t *testing.T) {
	js := fmt.Sprintf(`{"v":%d,"host":%q,"zfs_version":{"userland":"old"},"memory":{"zfs_version":{"v":1,"data":{"userland":"new"}}}}`, stateVersion, testHost)
	h := decodeHost([]byte(js))
	if v := zfsVersionMemory.peek(h); v == nil || v.Userland != "new" {
		t.Errorf("read %+v, want the memory's", v)
	}
}
