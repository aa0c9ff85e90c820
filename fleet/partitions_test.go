package fleet

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/fleet/clustertest"
)

// owners records which server runs each partition's engine, and any moment
// two ran the same one.
type owners struct {
	mu      sync.Mutex
	running map[int]string
	twice   []string
}

func (o *owners) run(holder string) func(ctx context.Context, p int) error {
	return func(ctx context.Context, p int) error {
		o.mu.Lock()
		if cur, ok := o.running[p]; ok {
			o.twice = append(o.twice, fmt.Sprintf("partition %d: %s started while %s runs it", p, holder, cur))
		}
		o.running[p] = holder
		o.mu.Unlock()
		<-ctx.Done()
		o.mu.Lock()
		if o.running[p] == holder {
			delete(o.running, p)
		}
		o.mu.Unlock()
		return nil
	}
}

func (o *owners) owner(p int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.running[p]
}

// counts is how many partitions each server runs.
func (o *owners) counts() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for _, h := range o.running {
		out[h]++
	}
	return out
}

func (o *owners) waitFor(t *testing.T, what string, within time.Duration, want map[string]int) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got := o.counts()
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("%s: partitions per server %v after %v, want %v", what, got, within, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func openClusterServer(ctx context.Context, t *testing.T, cl *clustertest.Cluster, name string) *bus.Bus {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), URL: cl.URL(), User: clustertest.ServerUser,
			Password: clustertest.ServerPassword, TLSCA: cl.CA, Replicas: 3, Name: name, Partitions: 12}, nil)
		if err == nil {
			t.Cleanup(b.Close)
			return b
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // JetStream meta leader election
	}
}

// Partitions on a real three-node cluster: one server takes all, a second
// and a third get a fair share each, a crashed server's partitions move to
// the others within the lease TTL, a server that stops hands its own over
// at once, and no partition ever runs on two servers at a time.
func TestPartitionsShareMoveAndNeverOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	cl := clustertest.Start(t, "../configs/nats-cluster")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const ttl = 3 * time.Second
	o := &owners{running: map[int]string{}}
	type srv struct {
		b      *bus.Bus
		cancel context.CancelFunc
		done   chan struct{}
	}
	start := func(name string) *srv {
		b := openClusterServer(ctx, t, cl, name)
		sctx, scancel := context.WithCancel(ctx)
		s := &srv{b: b, cancel: scancel, done: make(chan struct{})}
		ps := &Partitions{JS: b.JS, Count: 12, Holder: name, TTL: ttl, Replicas: 3, Run: o.run(name)}
		go func() {
			defer close(s.done)
			if err := ps.Lead(sctx); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}()
		return s
	}
	a := start("srv-a")
	t.Logf("one server: all 12 in %v", o.waitFor(t, "one server", 30*time.Second, map[string]int{"srv-a": 12}))
	b := start("srv-b")
	t.Logf("two: 6 + 6 in %v", o.waitFor(t, "a second server", 20*time.Second, map[string]int{"srv-a": 6, "srv-b": 6}))
	c := start("srv-c")
	t.Logf("three: 4 + 4 + 4 in %v", o.waitFor(t, "a third server", 20*time.Second, map[string]int{"srv-a": 4, "srv-b": 4, "srv-c": 4}))
	// What `zwatch fleet status` shows of it.
	st, err := Status(ctx, a.b.JS)
	if err != nil {
		t.Fatal(err)
	}
	if st.Partitions != 12 || st.Unowned != 0 || len(st.Table) != 12 || !st.Leases || len(st.Servers) != 3 {
		t.Fatalf("fleet status: %+v", st)
	}
	for _, s := range st.Servers {
		if s.Partitions != 4 {
			t.Errorf("fleet status: %s holds %d partitions, want 4", s.Server, s.Partitions)
		}
	}
	for _, r := range st.Table {
		if want := o.owner(r.Partition); r.Owner != want {
			t.Errorf("fleet status: partition %d owned by %q, its engine runs on %q", r.Partition, r.Owner, want)
		}
	}

	// A crash: c's connection drops; it cannot renew, stops its engines
	// after 2/3 TTL, and its leases and member key expire after TTL.
	c.b.NC.Close()
	took := o.waitFor(t, "a crashed server", 3*ttl, map[string]int{"srv-a": 6, "srv-b": 6})
	t.Logf("crash of srv-c: its partitions ran elsewhere after %v (lease TTL %v)", took, ttl)
	if took > ttl+ttl/3+2*time.Second {
		t.Errorf("partitions of a crashed server moved after %v; want within the TTL %v and a renewal round", took, ttl)
	}
	c.cancel()
	<-c.done

	// A clean stop hands over at once.
	b.cancel()
	<-b.done
	took = o.waitFor(t, "a stopped server", 3*ttl, map[string]int{"srv-a": 12})
	t.Logf("clean stop of srv-b: its partitions ran on srv-a after %v", took)
	if took > ttl/3+2*time.Second {
		t.Errorf("a clean stop's partitions moved after %v; want about one renewal round (%v)", took, ttl/3)
	}
	a.cancel()
	<-a.done
	if len(o.twice) > 0 {
		t.Errorf("a partition ran on two servers at once:\n%v", o.twice)
	}
	if n := len(o.counts()); n != 0 {
		t.Errorf("engines still running after every server stopped: %v", o.counts())
	}
}
