package silence

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
)

func openKV(ctx context.Context, t *testing.T, dir string) (*bus.Bus, jetstream.KeyValue) {
	t.Helper()
	b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	return b, kv
}

func newTestSilence(t *testing.T, matcher string, start, end time.Time) *Silence {
	t.Helper()
	ms, err := ParseMatchers([]string{matcher})
	if err != nil {
		t.Fatal(err)
	}
	id, err := NewID()
	if err != nil {
		t.Fatal(err)
	}
	return &Silence{ID: id, Matchers: ms, StartsAt: start, EndsAt: end, CreatedBy: "alice", Comment: "new disk ordered", MaxSeverity: alert.Warning, UpdatedAt: start}
}

// On a real embedded bus: silences are stored under silence.<ID> in the
// state bucket, listed, found by a unique prefix of their ID, expired with
// a compare-and-set, and still there after the bus is closed and opened
// again.
func TestStoreOnTheBus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	b, kv := openKV(ctx, t, dir)
	now := time.Now().UTC().Truncate(time.Second)
	a := newTestSilence(t, "pool=tank", now, now.Add(7*24*time.Hour))
	p := newTestSilence(t, "host=nas2", now.Add(time.Hour), now.Add(2*time.Hour))
	for _, s := range []*Silence{a, p} {
		if err := Create(ctx, kv, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := Create(ctx, kv, a); err == nil {
		t.Error("the same ID was stored twice")
	}
	// The rule engine's keys are left alone and do not disturb the list.
	if _, err := kv.Put(ctx, "rules.host.nas1", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, KeyPrefix+"garbage", []byte(`{`)); err != nil {
		t.Fatal(err)
	}
	list, skipped, err := List(ctx, b.JS, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != p.ID || len(skipped) != 1 {
		t.Fatalf("list %+v skipped %v", list, skipped)
	}
	if list[0].State(now) != Active || list[1].State(now) != Pending || list[0].Revision() == 0 {
		t.Errorf("states %s %s rev %d", list[0].State(now), list[1].State(now), list[0].Revision())
	}

	got, err := Find(list, strings.ToUpper(a.ID[:6]))
	if err != nil || got.ID != a.ID {
		t.Errorf("find by prefix: %v %v", got.ID, err)
	}
	if _, err := Find(list, "ffffffff-"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown ID: %v", err)
	}
	if _, err := Find(append(list, Silence{ID: a.ID[:4] + "0000-0000-4000-8000-000000000000"}), a.ID[:4]); err == nil || !strings.Contains(err.Error(), "give more of it") {
		t.Errorf("ambiguous prefix: %v", err)
	}

	// Expire: an active one ends now; a pending one starts and ends now.
	at := now.Add(time.Minute)
	ea, err := Expire(ctx, kv, list[0], "bob", at)
	if err != nil || ea.State(at) != Expired || ea.ExpiredBy != "bob" || ea.NoticeDue(at) {
		t.Fatalf("expire active: %+v %v", ea, err)
	}
	ep, err := Expire(ctx, kv, list[1], "bob", at)
	if err != nil || !ep.StartsAt.Equal(at) || ep.State(at) != Expired {
		t.Fatalf("expire pending: %+v %v", ep, err)
	}
	// What was read before the change is stale: a compare-and-set refuses it.
	if _, err := MarkNoticed(ctx, kv, list[0], at); !errors.Is(err, ErrChanged) {
		t.Errorf("update over an old revision: %v", err)
	}
	if again, err := Expire(ctx, kv, ea, "carol", at.Add(time.Minute)); err != nil || again.ExpiredBy != "bob" {
		t.Errorf("expiring twice: %+v %v", again, err)
	}

	b.Close()
	b, kv = openKV(ctx, t, dir)
	defer b.Close()
	g, err := Get(ctx, kv, a.ID)
	if err != nil || g.State(at) != Expired || g.Comment != "new disk ordered" || g.Matchers.String() != `pool="tank"` {
		t.Fatalf("after a restart: %+v %v", g, err)
	}
	if err := Remove(ctx, kv, g); err != nil {
		t.Fatal(err)
	}
	if _, err := Get(ctx, kv, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("removed silence still read: %v", err)
	}
}
