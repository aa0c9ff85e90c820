package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/rules"
)

// Partition is one share of the hosts on a partitioned facts stream
// (bus/partition.go): its engine reads the durable consumer
// ConsumerFor(Index), loads and saves only its hosts' states, and keeps its
// own position. Engines of different partitions share nothing but the
// outbox and the silences.
type Partition struct {
	Index, Count int
}

func (p *Partition) owns(hostToken string) bool {
	return bus.PartitionOf(hostToken, p.Count) == p.Index
}

// ConsumerFor names partition p's durable consumer on the facts stream.
func ConsumerFor(p int) string { return ConsumerName + "-p" + strconv.Itoa(p) }

// PartitionOfConsumer returns the partition a consumer name is for; ok is
// false for a name ConsumerFor did not make.
func PartitionOfConsumer(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, ConsumerName+"-p")
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(rest)
	return p, err == nil && p >= 0 && strconv.Itoa(p) == rest
}

// legacyFilter is what the unpartitioned consumer still has to apply once
// the stream is partitioned: the facts stored before, without a partition
// token (those after it match no filter of this form).
var legacyFilter = "zwatch." + bus.Version + ".>"

// ErrDrained is returned by an engine run with DrainLegacy once the
// unpartitioned consumer is empty and removed.
var ErrDrained = errors.New("rules: the unpartitioned consumer is drained and removed")

func consumerOf(opts Options) (name, filter string) {
	switch {
	case opts.Partition != nil:
		return ConsumerFor(opts.Partition.Index), bus.PartitionFilter(opts.Partition.Index)
	case opts.DrainLegacy:
		return ConsumerName, legacyFilter
	}
	return ConsumerName, ""
}

func positionKeyOf(opts Options) string {
	if opts.Partition != nil {
		return positionKey + ".p" + strconv.Itoa(opts.Partition.Index)
	}
	return positionKey
}

func (r *runner) consumerName() string { name, _ := consumerOf(r.opts); return name }
func (r *runner) positionKey() string  { return positionKeyOf(r.opts) }

// global says whether this engine does the work that belongs to no host:
// silence expiry notices and removing stale silences (partition 0's, so
// that n engines do not send n notices).
func (r *runner) global() bool {
	return r.opts.Partition == nil || r.opts.Partition.Index == 0
}

// drained reports, for DrainLegacy, that the consumer has nothing left to
// deliver or to acknowledge and has been removed.
func (r *runner) drained(ctx context.Context, cons jetstream.Consumer) bool {
	if len(r.batch) > 0 || len(r.pending) > 0 || r.e.Unsaved() {
		return false
	}
	info, err := cons.Info(ctx)
	if err != nil || info.NumPending > 0 || info.NumAckPending > 0 {
		return false
	}
	if err := r.b.JS.DeleteConsumer(ctx, bus.StreamFacts, ConsumerName); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		r.log.Warn("rules: cannot remove the drained unpartitioned consumer", "consumer", ConsumerName, "err", err)
		return false
	}
	r.log.Info("rules: the facts stored before partitioning are applied; the unpartitioned consumer is removed", "consumer", ConsumerName)
	return true
}

// LegacyConsumerExists reports whether the unpartitioned consumer is still
// there: partition engines wait until it is drained, so that no host is
// judged by two engines at once.
func LegacyConsumerExists(ctx context.Context, js jetstream.JetStream) (bool, error) {
	_, err := js.Consumer(ctx, bus.StreamFacts, ConsumerName)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return false, nil
	}
	return false, fmt.Errorf("look up consumer %s: %w", ConsumerName, err)
}

// StateKeys lists the state bucket's keys once for the partition engines
// of a server that start together: the keys do not say which partition a
// host is in, so each engine would list every host's key to load its own
// (64 engines, 10,000 hosts: 640,000 keys read before the first fact). A
// list younger than stateKeysMaxAge is reused. It may miss a host first
// saved since; the engine's first save of that host then finds the key
// (Create, not Put: a conflict), reloads in full and applies the batch
// again, before any page of it goes out.
type StateKeys struct {
	mu   sync.Mutex
	at   time.Time
	keys []string
}

const stateKeysMaxAge = 5 * time.Second

func (s *StateKeys) list(ctx context.Context, kv jetstream.KeyValue) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys != nil && time.Since(s.at) < stateKeysMaxAge {
		return s.keys, nil
	}
	at := time.Now()
	keys, err := rules.ListStateKeys(ctx, kv)
	if err != nil {
		return nil, err
	}
	s.keys, s.at = keys, at
	return keys, nil
}

// load reads the engine's hosts' states, through the server's shared key
// list when there is one.
func load(ctx context.Context, e *rules.Engine, kv jetstream.KeyValue, shared *StateKeys) error {
	if shared == nil {
		return e.Load(ctx, kv)
	}
	keys, err := shared.list(ctx, kv)
	if err != nil {
		return err
	}
	return e.LoadKeys(ctx, kv, keys)
}
