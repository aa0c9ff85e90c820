package runner

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
)

// hostsInPartitions returns one host name per partition of n.
func hostsInPartitions(n int) []string {
	out := make([]string, n)
	found := 0
	for i := 0; found < n; i++ {
		h := fmt.Sprintf("nas%d", i)
		if p := bus.PartitionOf(h, n); out[p] == "" {
			out[p] = h
			found++
		}
	}
	return out
}

// startEngine runs RunWith with opts on bb's bus; stop cancels it and
// returns what it returned.
func (bb *batchBench) startEngine(opts Options) (stop func() error, done <-chan error) {
	rctx, cancel := context.WithCancel(bb.ctx)
	ch := make(chan error, 1)
	go func() { ch <- RunWith(rctx, bb.b, bb.cfg, opts, nil) }()
	return func() error { cancel(); return <-ch }, ch
}

// The upgrade of an unpartitioned stream and a partition handed over in
// the middle of an incident, on one embedded server:
//   - an unpartitioned engine pages host A's fault; host B's fault waits in
//     its consumer while no engine runs;
//   - the stream is partitioned (4); the drain applies B's fault from the
//     old consumer, removes it, and returns ErrDrained;
//   - each partition's engine evaluates only its own hosts; host C's fault
//     pages from its partition;
//   - A's partition engine stops mid-incident and another takes over: A's
//     recovery resolves the page it did not send, once.
func TestPartitionUpgradeAndHandOverMidIncident(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dir := t.TempDir()
	open := func(parts int) *bus.Bus {
		b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: dir, Partitions: parts}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	hosts := hostsInPartitions(4)
	a, b, c := hosts[0], hosts[1], hosts[2]
	bb := &batchBench{t: t, ctx: ctx, b: open(0), cfg: cfg}

	stop, _ := bb.startEngine(Options{})
	bb.heartbeats(a, 2)
	bb.status(a, faultFile)
	bb.waitNotes(1)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	bb.heartbeats(b, 2)
	bb.status(b, faultFile)
	bb.b.Close()

	bb.b = open(4)
	defer func() { bb.b.Close() }()
	if pending, err := LegacyConsumerExists(ctx, bb.b.JS); err != nil || !pending {
		t.Fatalf("the unpartitioned consumer before the drain: exists %v, %v", pending, err)
	}
	_, drained := bb.startEngine(Options{DrainLegacy: true})
	select {
	case err := <-drained:
		if !errors.Is(err, ErrDrained) {
			t.Fatalf("drain returned %v, want ErrDrained", err)
		}
	case <-time.After(45 * time.Second):
		t.Fatal("the drain did not end within 45 s")
	}
	if pending, _ := LegacyConsumerExists(ctx, bb.b.JS); pending {
		t.Fatal("the unpartitioned consumer is still there after the drain")
	}
	bb.checkNotes(map[string]int{a + " firing": 1, b + " firing": 1})

	stops := map[int]func() error{}
	for p := range 4 {
		stops[p], _ = bb.startEngine(Options{Partition: &Partition{Index: p, Count: 4}})
	}
	bb.heartbeats(c, 2)
	bb.status(c, faultFile)
	bb.waitNotes(3)

	// Partition 0 (host a, firing) moves to another engine mid-incident.
	if err := stops[0](); err != nil {
		t.Fatal(err)
	}
	stops[0], _ = bb.startEngine(Options{Partition: &Partition{Index: 0, Count: 4}})
	bb.status(a, healthyFile)
	bb.heartbeats(a, 2)
	bb.waitNotes(4)
	time.Sleep(2 * time.Second) // anything sent twice would be out by now
	bb.checkNotes(map[string]int{a + " firing": 1, a + " resolved": 1, b + " firing": 1, c + " firing": 1})

	// Each partition's consumer holds its own hosts' facts only, all acked.
	for p := range 4 {
		cons, err := bb.b.JS.Consumer(ctx, bus.StreamFacts, ConsumerFor(p))
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		info := cons.CachedInfo()
		if info.Config.FilterSubject != bus.PartitionFilter(p) {
			t.Errorf("partition %d's consumer filters %q", p, info.Config.FilterSubject)
		}
	}
	for p, stop := range stops {
		if err := stop(); err != nil {
			t.Errorf("partition %d: %v", p, err)
		}
	}
	as, err := rules.Active(ctx, bb.b)
	if err != nil {
		t.Fatal(err)
	}
	firing := map[string]bool{}
	for _, x := range as {
		if x.State == alert.Firing {
			firing[x.Labels["host"]] = true
		}
	}
	if firing[a] || !firing[b] || !firing[c] {
		t.Errorf("active alerts after the hand-over: %v; want %s and %s firing, %s resolved", firing, b, c, a)
	}
}

func TestPartitionOfConsumer(t *testing.T) {
	for _, p := range []int{0, 7, 63, 1023} {
		if got, ok := PartitionOfConsumer(ConsumerFor(p)); !ok || got != p {
			t.Errorf("PartitionOfConsumer(%s) = %d %v", ConsumerFor(p), got, ok)
		}
	}
	for _, name := range []string{"rules", "rules-p", "rules-p-1", "rules-p07", "web", "rules-px"} {
		if _, ok := PartitionOfConsumer(name); ok {
			t.Errorf("PartitionOfConsumer(%q) ok", name)
		}
	}
}

// A partition engine that loads from a shared key list missing a host
// (saved after the list was read) does not page that host's firing alert
// again: its first save of the host conflicts (Create on an existing key),
// and it reloads the state in full before the page would go out.
func TestPartitionStaleKeyListDoesNotPageTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: t.TempDir(), Partitions: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	bb := &batchBench{t: t, ctx: ctx, b: b, cfg: cfg}
	a := hostsInPartitions(4)[0]
	stop, _ := bb.startEngine(Options{Partition: &Partition{Index: 0, Count: 4}})
	bb.heartbeats(a, 2)
	bb.status(a, faultFile)
	bb.waitNotes(1)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	stale := &StateKeys{keys: []string{}, at: time.Now()} // read before a's state was saved
	stop, _ = bb.startEngine(Options{Partition: &Partition{Index: 0, Count: 4}, StateKeys: stale})
	defer func() { _ = stop() }()
	bb.status(a, faultFile)
	bb.heartbeats(a, 2)
	waitUntil(t, 30*time.Second, "the partition's facts acknowledged", func() bool {
		c, err := b.JS.Consumer(ctx, bus.StreamFacts, ConsumerFor(0))
		if err != nil {
			return false
		}
		info, err := c.Info(ctx)
		return err == nil && info.NumPending == 0 && info.NumAckPending == 0
	})
	time.Sleep(2 * time.Second)
	bb.checkNotes(map[string]int{a + " firing": 1})
}
