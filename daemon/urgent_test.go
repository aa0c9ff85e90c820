package daemon

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
)

// targetToy records the targets it was asked to read.
type targetToy struct {
	mu      sync.Mutex
	targets []string
	got     chan struct{}
	block   chan struct{}
}

func (c *targetToy) Name() string                                        { return "toy_target" }
func (c *targetToy) Collect(context.Context, collectors.Publisher) error { return nil }
func (c *targetToy) CollectTarget(ctx context.Context, _ collectors.Publisher, target string) error {
	if c.block != nil {
		<-c.block
	}
	c.mu.Lock()
	c.targets = append(c.targets, target)
	c.mu.Unlock()
	c.got <- struct{}{}
	return nil
}

type nopPublisher struct{}

func (nopPublisher) Publish(context.Context, string, string, any, ...string) error { return nil }

// A follower built before the collector it asks gets a working Urgent; the
// requests reach CollectTarget deduplicated, and a request for a collector
// that does not run here is dropped without blocking.
func TestUrgentReachesTheTargetCollector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	toy := &targetToy{got: make(chan struct{}, 32), block: make(chan struct{})}
	var ask, askNobody func(string)
	table := []collectors.Spec{
		{Name: "asker", Follow: func(e collectors.Env) collectors.Follower {
			ask, askNobody = e.Urgent("toy_target"), e.Urgent("not_running")
			return idleFollower{}
		}},
		{Name: "toy_target", Every: func(*config.Config) time.Duration { return time.Hour },
			Poll: func(collectors.Env) collectors.Collector { return toy }},
	}
	cfg := config.Default()
	comps := collectorComponents(&cfg, table, nopPublisher{}, newTracker(), slog.New(slog.DiscardHandler))
	for _, c := range comps {
		go func() { _ = c.Run(ctx) }()
	}
	askNobody("/dev/sdb") // dropped: must not block or panic
	ask("sdb")
	<-time.After(50 * time.Millisecond) // the worker is now blocked reading sdb
	ask("sdc")
	ask("sdc")
	ask("sdc")
	close(toy.block)
	for range 2 {
		select {
		case <-toy.got:
		case <-ctx.Done():
			t.Fatal("targets not read")
		}
	}
	select {
	case <-toy.got:
		t.Errorf("a duplicate request was read: %v", toy.targets)
	case <-time.After(200 * time.Millisecond):
	}
	toy.mu.Lock()
	defer toy.mu.Unlock()
	if len(toy.targets) != 2 || toy.targets[0] != "sdb" || toy.targets[1] != "sdc" {
		t.Errorf("targets = %v, want [sdb sdc]", toy.targets)
	}
}

// The queue keeps at most maxUrgentPending targets and counts the rest.
func TestUrgentQueueIsBounded(t *testing.T) {
	q := newUrgentQueue("smart")
	q.ask("sda") // not running: dropped
	if len(q.take()) != 0 {
		t.Fatal("a request was queued for a collector that does not run")
	}
	q.running.Store(true)
	for i := range maxUrgentPending + 5 {
		q.ask(string(rune('a'+i%26)) + "x")
	}
	if n := len(q.take()); n != maxUrgentPending {
		t.Errorf("queued %d, want %d", n, maxUrgentPending)
	}
	if d := q.dropped.Load(); d != 5 {
		t.Errorf("dropped = %d, want 5", d)
	}
}

type idleFollower struct{}

func (idleFollower) Name() string { return "asker" }
func (idleFollower) Run(ctx context.Context, _ collectors.Publisher) error {
	<-ctx.Done()
	return nil
}
