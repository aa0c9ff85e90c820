package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/testutil"
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

// chanPublisher hands each published kind to a channel.
type chanPublisher struct{ kinds chan string }

func (p chanPublisher) Publish(_ context.Context, kind, _ string, _ any, _ ...string) error {
	p.kinds <- kind
	return nil
}

// The real SMART collector, built as the table builds it, is a target
// collector: a follower's request reaches it through the daemon and one
// smart fact of the named disk is published, read without -n standby.
func TestUrgentReachesTheSmartCollector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	smartctl := testutil.WriteScript(t, dir, "smartctl", `#!/bin/sh
# stand-in smartctl: a recorded healthy SSD for any disk
echo "$*" >> "`+argv+`"
cat "`+filepath.Join(mustAbs(t, "../testdata/smartctl"), "sata-ssd-wd-red-sa500-4tb-no-thresh.json")+`"
`)
	var ask func(string)
	table := []collectors.Spec{
		{Name: "asker", Follow: func(e collectors.Env) collectors.Follower {
			ask = e.Urgent(collectors.SmartCollectorName)
			return idleFollower{}
		}},
		{Name: collectors.SmartCollectorName, Every: func(*config.Config) time.Duration { return time.Hour },
			Poll: func(collectors.Env) collectors.Collector {
				c := collectors.NewSmartCollector(collectors.SmartConfig{Smartctl: smartctl, Timeout: 5 * time.Second}, nil)
				c.Root = "../testdata/sysfs/firecracker-virtio-vda" // real sysfs capture: vda
				return c
			}},
	}
	cfg := config.Default()
	pub := chanPublisher{kinds: make(chan string, 8)}
	for _, c := range collectorComponents(&cfg, table, pub, newTracker(), slog.New(slog.DiscardHandler)) {
		if c.Name == "smart-urgent" || c.Name == "asker" {
			go func() { _ = c.Run(ctx) }()
		}
	}
	ask("/dev/vda")
	select {
	case k := <-pub.kinds:
		if k != facts.Smart.Name() {
			t.Fatalf("published %s, want a smart fact", k)
		}
	case <-ctx.Done():
		t.Fatal("no smart fact")
	}
	b, err := os.ReadFile(argv)
	if err != nil || strings.TrimSpace(string(b)) != "--json=c -a /dev/vda" {
		t.Errorf("smartctl argv %q, %v", b, err)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
