package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// Keys of LeaseBucket used by a partitioned rule engine: one lease per
// partition, and one member key per running server, which the servers
// count to share the partitions evenly. RulesLease itself is held by one
// partitioned server too: it drains what the unpartitioned consumer holds
// after an upgrade, and keeps a server of an older version (which runs the
// unpartitioned engine under that lease) standing by.
const (
	partitionLeasePrefix = "rules.part."
	memberPrefix         = "member."
)

// PartitionLease names partition p's lease.
func PartitionLease(p int) string { return partitionLeasePrefix + strconv.Itoa(p) }

func memberKey(holder string) string { return memberPrefix + bus.Token(holder) }

// Partitions runs a partitioned rule engine on this server: it holds a fair
// share of Count partition leases (Count/servers, the remainder going to
// the first servers by name), runs Run for each partition it holds, and
// rebalances as servers join and leave: a server above its share stops
// that many engines (each saves its state and acknowledges what it
// applied) and releases their leases, which a server below its share
// takes. A server that dies stops renewing; its leases and member key
// expire after TTL and the others take its partitions.
type Partitions struct {
	JS       jetstream.JetStream
	Count    int
	Holder   string
	TTL      time.Duration
	Replicas int
	Log      *slog.Logger
	// Run evaluates partition p until ctx ends.
	Run func(ctx context.Context, p int) error
	// Drain applies what the unpartitioned consumer still holds and
	// returns once it is removed (runner.RunWith with DrainLegacy).
	Drain func(ctx context.Context) error
	// LegacyPending says whether the unpartitioned consumer still exists:
	// no partition engine starts before it is drained.
	LegacyPending func(ctx context.Context) (bool, error)
}

type heldLease struct {
	rev     uint64
	renewed time.Time
	cancel  context.CancelFunc // nil while its engine waits for the drain
	done    chan struct{}
	// stopping: this server stopped the engine (not a failure)
	stopping bool
}

// Lead runs until ctx ends.
func (ps *Partitions) Lead(ctx context.Context) error {
	if ps.Count < 1 || ps.Run == nil {
		return fmt.Errorf("partitions: count %d and a run function are required", ps.Count)
	}
	if ps.TTL <= 0 {
		ps.TTL = DefaultLeaseTTL
	}
	log := ps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kv, err := LeaseKV(ctx, ps.JS, ps.TTL, ps.Replicas)
	if err != nil {
		return err
	}
	l := &leader{ps: ps, kv: kv, log: log, held: map[int]*heldLease{}, backoff: map[int]time.Time{}}
	defer l.releaseAll(ctx)
	every := ps.TTL / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		l.round(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

type leader struct {
	ps      *Partitions
	kv      jetstream.KeyValue
	log     *slog.Logger
	held    map[int]*heldLease
	legacy  *heldLease
	backoff map[int]time.Time // a partition whose engine failed is left alone until then
	drained bool
	wg      sync.WaitGroup
}

// round renews, counts the servers and takes or gives partitions.
func (l *leader) round(ctx context.Context) {
	ps := l.ps
	// The round's own requests; each renewal has its own third of the TTL.
	rctx, cancel := context.WithTimeout(ctx, ps.TTL)
	defer cancel()
	if _, err := l.kv.Put(rctx, memberKey(ps.Holder), []byte(ps.Holder)); err != nil && ctx.Err() == nil {
		l.log.Warn("partitions: cannot announce this server", "err", err)
	}
	for p, h := range l.held {
		if h.cancel != nil && closed(h.done) {
			l.stop(p, h, true) // its engine failed: give it back for a while
		}
	}
	for _, p := range l.renewAll(ctx) {
		l.stop(p, l.held[p], false)
	}
	l.legacyRound(ctx, rctx)
	members, err := l.keys(rctx, memberPrefix)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("partitions: cannot count the servers", "err", err)
		}
		return
	}
	target := fairShare(ps.Count, members, memberKey(ps.Holder))
	taken, err := l.keys(rctx, partitionLeasePrefix)
	if err != nil {
		return
	}
	// Above the share: give back the highest partitions, one round's worth.
	if extra := len(l.held) - target; extra > 0 {
		give := sortedDesc(l.held)[:extra]
		l.log.Info("partitions: handing partitions over", "partitions", give, "share", target, "servers", len(members))
		l.stopAll(give)
	}
	// Below it: take free ones, starting at this server's place in the
	// ring so that servers starting together do not race for the same.
	free := make([]int, 0)
	start := ringStart(ps.Count, members, memberKey(ps.Holder))
	for i := 0; i < ps.Count; i++ {
		p := (start + i) % ps.Count
		if _, mine := l.held[p]; mine || taken[PartitionLease(p)] || time.Now().Before(l.backoff[p]) {
			continue
		}
		free = append(free, p)
	}
	for _, p := range free {
		if len(l.held) >= target {
			break
		}
		rev, err := l.kv.Create(rctx, PartitionLease(p), []byte(ps.Holder))
		if err != nil {
			// Taken meanwhile, or unreachable: next round. A create whose
			// answer was lost but which landed names this holder.
			e, gerr := l.kv.Get(rctx, PartitionLease(p))
			if gerr != nil || string(e.Value()) != ps.Holder {
				continue
			}
			rev = e.Revision()
		}
		h := &heldLease{rev: rev, renewed: time.Now()}
		l.held[p] = h
		l.log.Info("partitions: partition taken", "partition", p, "share", target, "servers", len(members))
	}
	// Engines start once the facts stored before partitioning are applied.
	if !l.drained && ps.LegacyPending != nil {
		pending, err := ps.LegacyPending(rctx)
		if err != nil || pending {
			return
		}
	}
	l.drained = true
	for p, h := range l.held {
		if h.cancel == nil {
			l.start(ctx, p, h)
		}
	}
}

// legacyRound holds RulesLease and, while the unpartitioned consumer
// exists, runs the drain under it.
func (l *leader) legacyRound(ctx, rctx context.Context) {
	if h := l.legacy; h != nil {
		if !l.renew(rctx, RulesLease, h) {
			l.stopLegacy()
			return
		}
		if !closed(h.done) || l.drained || l.ps.Drain == nil {
			return
		}
		if pending, err := l.ps.LegacyPending(rctx); err != nil || !pending {
			return
		}
		l.drain(ctx, h) // the last drain ended early (an error): again
		return
	}
	rev, err := l.kv.Create(rctx, RulesLease, []byte(l.ps.Holder))
	if err != nil {
		return
	}
	h := &heldLease{rev: rev, renewed: time.Now(), done: make(chan struct{})}
	l.legacy = h
	if l.ps.Drain == nil || l.ps.LegacyPending == nil {
		close(h.done)
		return
	}
	l.drain(ctx, h)
}

func (l *leader) drain(ctx context.Context, h *heldLease) {
	h.done = make(chan struct{})
	dctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(h.done)
		if err := l.ps.Drain(dctx); err != nil && dctx.Err() == nil {
			l.log.Info("partitions: unpartitioned consumer", "result", err)
		}
	}()
}

func (l *leader) stopLegacy() {
	if h := l.legacy; h != nil {
		if h.cancel != nil {
			h.cancel()
		}
		<-h.done
		l.legacy = nil
	}
}

// renewParallel bounds the renewals in flight: each is a replicated write,
// and one after the other, 64 of them outlasted a round on a busy cluster.
const renewParallel = 16

// renewAll renews every held partition lease at once, each within a third
// of the TTL, and returns the partitions whose lease is lost.
func (l *leader) renewAll(ctx context.Context) []int {
	var mu sync.Mutex
	var lost []int
	var wg sync.WaitGroup
	sem := make(chan struct{}, renewParallel)
	for p, h := range l.held {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rctx, cancel := context.WithTimeout(ctx, l.ps.TTL/3)
			defer cancel()
			if !l.renew(rctx, PartitionLease(p), h) {
				mu.Lock()
				lost = append(lost, p)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lost
}

// renew extends a lease; false when it is lost or has not been renewed for
// 2/3 of its TTL (the engine must stop before the key expires). A renewal
// whose answer was lost but which landed leaves the key one revision
// ahead, still naming this holder: that revision is adopted.
func (l *leader) renew(ctx context.Context, key string, h *heldLease) bool {
	rev, err := l.kv.Update(ctx, key, []byte(l.ps.Holder), h.rev)
	if err == nil {
		h.rev, h.renewed = rev, time.Now()
		return true
	}
	if errors.Is(err, jetstream.ErrKeyExists) {
		if e, gerr := l.kv.Get(ctx, key); gerr == nil && string(e.Value()) == l.ps.Holder {
			h.rev = e.Revision()
			if rev, err = l.kv.Update(ctx, key, []byte(l.ps.Holder), h.rev); err == nil {
				h.rev, h.renewed = rev, time.Now()
				return true
			}
		}
	}
	lost := errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound)
	if !lost && time.Since(h.renewed) < 2*l.ps.TTL/3 {
		l.log.Warn("partitions: lease not renewed; retrying", "lease", key, "err", err)
		return true
	}
	l.log.Warn("partitions: lease lost", "lease", key, "err", err)
	return false
}

func (l *leader) start(ctx context.Context, p int, h *heldLease) {
	pctx, cancel := context.WithCancel(ctx)
	h.cancel, h.done = cancel, make(chan struct{})
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(h.done)
		if err := l.ps.Run(pctx, p); err != nil && pctx.Err() == nil {
			l.log.Error("partitions: rule engine stopped; giving its partition back", "partition", p, "err", err)
			cancel()
		}
	}()
}

// stop ends partition p's engine (it saves and acknowledges what it applied
// on its way out) and, when release is set or the engine failed, deletes
// the lease so that another server takes it at once.
func (l *leader) stop(p int, h *heldLease, release bool) {
	failed := false
	if h.cancel != nil {
		failed = closed(h.done) && !h.stopping
		h.cancel()
		<-h.done
	}
	delete(l.held, p)
	if failed {
		l.backoff[p] = time.Now().Add(l.ps.TTL)
	}
	if release || failed {
		rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = l.kv.Delete(rctx, PartitionLease(p), jetstream.LastRevision(h.rev))
	}
}

// stopAll stops several engines at once (each saves and gives back what
// it pulled on its way out: one after the other, a large hand-over would
// delay the renewals of the rest) and releases their leases.
func (l *leader) stopAll(ps []int) {
	for _, p := range ps {
		if h := l.held[p]; h.cancel != nil {
			h.stopping = true
			h.cancel()
		}
	}
	for _, p := range ps {
		l.stop(p, l.held[p], true)
	}
}

func (l *leader) releaseAll(ctx context.Context) {
	all := make([]int, 0, len(l.held))
	for p := range l.held {
		all = append(all, p)
	}
	l.stopAll(all)
	legacy := l.legacy
	l.stopLegacy()
	l.wg.Wait()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if legacy != nil {
		_ = l.kv.Delete(rctx, RulesLease, jetstream.LastRevision(legacy.rev))
	}
	_ = l.kv.Delete(rctx, memberKey(l.ps.Holder))
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// keys lists the bucket's keys under prefix.
func (l *leader) keys(ctx context.Context, prefix string) (map[string]bool, error) {
	lister, err := l.kv.ListKeysFiltered(ctx, prefix+"*")
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return map[string]bool{}, nil
		}
		return nil, err
	}
	out := map[string]bool{}
	for k := range lister.Keys() {
		out[k] = true
	}
	_ = lister.Stop() // "invalid subscription" once the listing ended by itself
	return out, nil
}

// fairShare is how many of n partitions the member me takes: n/k, and one
// more for the first n%k members by name.
func fairShare(n int, members map[string]bool, me string) int {
	names := memberNames(members, me)
	k := len(names)
	i := sort.SearchStrings(names, me)
	share := n / k
	if i < n%k {
		share++
	}
	return share
}

// ringStart is where member me starts looking for free partitions.
func ringStart(n int, members map[string]bool, me string) int {
	names := memberNames(members, me)
	return sort.SearchStrings(names, me) * n / len(names)
}

func memberNames(members map[string]bool, me string) []string {
	names := make([]string, 0, len(members)+1)
	for k := range members {
		if strings.HasPrefix(k, memberPrefix) && k != me {
			names = append(names, k)
		}
	}
	names = append(names, me)
	sort.Strings(names)
	return names
}

func sortedDesc(held map[int]*heldLease) []int {
	ps := make([]int, 0, len(held))
	for p := range held {
		ps = append(ps, p)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ps)))
	return ps
}
