package runner

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules"
)

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

// savedHost is the part of a saved host state (rules.StateJSON) these
// tests read: when each collector was last heard from.
type savedHost struct {
	Host       string `json:"host"`
	Collectors map[string]*struct {
		LastSeen *time.Time `json:"last_seen"`
	} `json:"collectors"`
}

// decodeHost reads data as a saved host state; nil if it is not one.
func decodeHost(data []byte) *savedHost {
	js, err := rules.StateJSON(data)
	if err != nil {
		return nil
	}
	var h savedHost
	if json.Unmarshal(js, &h) != nil || h.Host == "" {
		return nil
	}
	return &h
}
