package runner

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/recent"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/rules"
)

// An engine stopped while it saves (the server stops, or hands the
// partition to another server: its context ends) has its write cut off.
// That is no failing store: nothing is reported to the storage watch and
// nothing is logged as an error ("rule state not saved; evaluating in
// memory and retrying" at every such stop, before). The watch is the
// server's, shared by its engines: a failure reported by an engine that
// stops stays until some write of the rule state on that server succeeds,
// and after 5 s it pages StateStorageFailed and makes the server
// unhealthy, though the server goes on running its other partitions. The
// state is written once more on the way out (commitOnExit), for the engine
// that takes the partition over.
func TestStopDuringSaveIsNoStorageFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := openTestBus(ctx, t)
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reports []string
	opts := Options{Delivery: &delivery.Path{
		Storage: func(part string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				reports = append(reports, part+": "+err.Error())
			} else {
				reports = append(reports, part+": ok")
			}
		},
		Degraded: func() bool { return false },
	}}
	var logs syncLog
	log := slog.New(slog.NewTextHandler(&logs, nil))
	e := rules.NewEngine(config.DefaultRules(), log)
	env, err := bus.Wrap(facts.ZpoolStatus.Name(), testHost, "zpool_status", time.Now(),
		facts.StatusData{Source: "text", Pools: statusPools(t, faultFile)})
	if err != nil {
		t.Fatal(err)
	}
	var parsed bus.Envelope
	if err := json.Unmarshal(env, &parsed); err != nil {
		t.Fatal(err)
	}
	if err := e.Observe(parsed, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !e.Unsaved() {
		t.Fatal("the fault changed nothing to save")
	}
	r := &runner{e: e, b: b, kv: kv, log: log, opts: opts, seen: recent.New[uint64](16), seed: maphash.MakeSeed(),
		out: opts.Delivery.Sender(b, log)}

	stopped, stop := context.WithCancel(ctx)
	stop()
	if conflict := r.save(stopped); conflict || !r.stateDown.IsZero() {
		t.Errorf("a save cut off by the stop: conflict %v, store down since %v", conflict, r.stateDown)
	}
	mu.Lock()
	if len(reports) != 0 {
		t.Errorf("a save cut off by the stop was reported to the storage watch: %v", reports)
	}
	mu.Unlock()
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a save cut off by the stop logged an error:\n%s", logs.String())
	}

	r.commitOnExit(stopped)
	if _, err := kv.Get(ctx, stateKey(testHost)); err != nil {
		t.Fatalf("the state is not in the bucket after the engine stopped: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 || reports[0] != "state: ok" {
		t.Errorf("reports on the way out: %v, want one success", reports)
	}
}

// syncLog is a log sink safe for the engine's goroutines.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
