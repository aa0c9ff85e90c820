package rules

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/config"
)

// lostAnswerKV is a state bucket whose next write lands but whose answer is
// lost, as on a store too slow to answer within the engine's timeout.
type lostAnswerKV struct {
	jetstream.KeyValue
	lose bool
}

func (kv *lostAnswerKV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	n, err := kv.KeyValue.Update(ctx, key, value, rev)
	if err == nil && kv.lose {
		kv.lose = false
		return 0, context.DeadlineExceeded
	}
	return n, err
}

// A write that timed out but landed is the engine's own: the next save
// takes its revision instead of reporting another engine's change, whose
// reload would bring back the older state and page a paged alert again
// (make e2e: PoolSuspended paged twice after a save timed out in a loaded
// guest).
func TestSaveAfterALostAnswerIsNoConflict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, real := openStateBucket(ctx, t)
	kv := &lostAnswerKV{KeyValue: real}
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	e := NewEngine(cfg, nil)
	now := t0
	if err := e.Observe(statusEnv(t, healthyFile, now), now); err != nil {
		t.Fatal(err)
	}
	e.Tick(now)
	if err := e.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}

	now = now.Add(10 * time.Second)
	if err := e.Observe(statusEnv(t, faultFile, now), now); err != nil {
		t.Fatal(err)
	}
	if f, _ := firingCount(e.Tick(now)); f != 1 {
		t.Fatalf("the fault did not page: %v", active(e))
	}
	kv.lose = true
	if err := e.Save(ctx, kv); err == nil || errors.Is(err, ErrStateConflict) {
		t.Fatalf("save whose answer was lost: %v, want the timeout", err)
	}
	// Something else changes before the retry (the next fact's effects).
	now = now.Add(10 * time.Second)
	if err := e.Observe(statusEnv(t, faultFile, now), now); err != nil {
		t.Fatal(err)
	}
	e.Tick(now)
	e.hosts[testHost].dirty = true
	if err := e.Save(ctx, kv); err != nil {
		t.Fatalf("the retry after a landed write: %v, want saved", err)
	}
	// What is stored is the newest state: a fresh engine does not page the
	// fault again.
	e2 := NewEngine(cfg, nil)
	if err := e2.Load(ctx, real); err != nil {
		t.Fatal(err)
	}
	if err := e2.Observe(statusEnv(t, faultFile, now), now); err != nil {
		t.Fatal(err)
	}
	if ns := e2.Tick(now.Add(time.Second)); len(ns) != 0 {
		t.Fatalf("the stored state paged the fault again: %v", noteLines(ns))
	}

	// A change by someone else is still a conflict.
	if _, err := real.Put(ctx, stateKey(testHost), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	// (a real change: the same bytes again are not written at all)
	hb := now.Add(time.Minute)
	e.hosts[testHost].Heartbeat, e.hosts[testHost].dirty = &hb, true
	if err := e.Save(ctx, kv); !errors.Is(err, ErrStateConflict) {
		t.Fatalf("another writer's change: %v, want ErrStateConflict", err)
	}
}
