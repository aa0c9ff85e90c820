package rules

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/silence"
)

// degradedState saves a host state with the alerts of the real b1 capture
// (vault DEGRADED, a disk OFFLINE) into the bus's state bucket.
func degradedState(ctx context.Context, t testing.TB) (*bus.Bus, jetstream.KeyValue) {
	t.Helper()
	b, kv := openStateBucket(ctx, t)
	e := newTestEngine()
	now := time.Now().Add(-time.Hour)
	observe(t, e, statusEnv(t, cap232+"b1-offline.zpool-status.txt", now), now)
	e.Tick(now.Add(time.Minute))
	if err := e.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}
	return b, kv
}

// The cache answers what ReadCurrent answers, reads the bucket again after
// a host's state or a silence changed, and tells silences by the clock.
func TestCurrentCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, kv := degradedState(ctx, t)
	var c CurrentCache
	first, err := c.Read(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := ReadCurrent(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Active()) == 0 || len(first.Active()) != len(direct.Active()) {
		t.Fatalf("cached %d active alerts, ReadCurrent %d; want the same, some", len(first.Active()), len(direct.Active()))
	}
	again, err := c.Read(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if again.e != first.e || !again.Now().After(first.Now()) {
		t.Fatal("unchanged bucket: the state was read again, or Now not moved on")
	}

	// A silence that starts a moment from now: written, it is read; its
	// start needs no write to mute the alerts.
	start := time.Now().Add(300 * time.Millisecond)
	s := newSilence(t, "pool=vault", start, start.Add(time.Hour), alert.Critical)
	if err := silence.Create(ctx, kv, &s); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Read(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if cur.e == first.e || len(cur.Silences(false)) != 1 {
		t.Fatalf("after a silence was written: state read again %v, %d silences", cur.e != first.e, len(cur.Silences(false)))
	}
	for _, a := range cur.Active() {
		if a.Silenced != nil {
			t.Fatalf("%s silenced before the silence starts", a.Name)
		}
	}
	time.Sleep(time.Until(start) + 50*time.Millisecond)
	later, err := c.Read(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	muted := 0
	for _, a := range later.Active() {
		if a.Silenced != nil {
			muted++
		}
	}
	if later.e != cur.e || muted == 0 {
		t.Fatalf("once the silence started: state read again %v, %d alerts muted; want the cached state, some muted", later.e != cur.e, muted)
	}

	// A host's state removed from the bucket: read again, gone.
	if err := kv.Purge(ctx, stateKey(testHost)); err != nil {
		t.Fatal(err)
	}
	gone, err := c.Read(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(gone.Active()); n != 0 {
		t.Fatalf("after the host's state was purged: %d active alerts", n)
	}
	var none *CurrentCache
	if _, err := none.Read(ctx, b); err != nil {
		t.Fatalf("nil cache: %v", err)
	}
}

// BenchmarkReadCurrent is what the alerts snapshot (every 5 s) and each
// status page or /metrics request read of the rule state: a host with the
// alerts of the real b1 capture, read and decoded anew, and through the
// cache with the bucket unchanged.
func BenchmarkReadCurrent(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bs, _ := degradedState(ctx, b)
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if cur, err := ReadCurrent(ctx, bs); err != nil || len(cur.Active()) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		var c CurrentCache
		b.ReportAllocs()
		for b.Loop() {
			if cur, err := c.Read(ctx, bs); err != nil || len(cur.Active()) == 0 {
				b.Fatal(err)
			}
		}
	})
}
