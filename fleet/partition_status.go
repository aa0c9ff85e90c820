package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/rules/runner"
)

// EngineStatus is `zwatch fleet status`: how the rule engine's work is
// split, who holds each share, and how far behind each is.
type EngineStatus struct {
	// Partitions is the facts stream's partition count (1: one engine).
	Partitions int `json:"partitions"`
	// Servers are the running servers (member keys, or holders of a
	// lease) with the partitions they hold and the facts waiting for them.
	Servers []ServerShare `json:"servers"`
	// Table has one row per partition (or one for the single engine).
	Table []PartitionRow `json:"table"`
	// Unowned counts partitions no server holds: their facts wait.
	Unowned int `json:"unowned"`
	// Leases is false on one machine's embedded bus, whose one engine
	// runs without a lease.
	Leases bool `json:"leases"`
	// LegacyPending, after an upgrade to partitions, is what the
	// unpartitioned consumer still holds; the partition engines start
	// once it is applied.
	LegacyPending *uint64 `json:"unpartitioned_pending,omitempty"`
}

// ServerShare is one server's part.
type ServerShare struct {
	Server     string `json:"server"`
	Partitions int    `json:"partitions"`
	Waiting    uint64 `json:"facts_waiting"`
}

// PartitionRow is one partition: its lease holder and its consumer's lag.
type PartitionRow struct {
	Partition int    `json:"partition"`
	Consumer  string `json:"consumer"`
	Owner     string `json:"owner,omitempty"`
	// Waiting is facts not yet delivered; Unacked delivered and not yet
	// acknowledged (applied, their state not yet saved).
	Waiting uint64 `json:"facts_waiting"`
	Unacked int    `json:"facts_unacked"`
}

// Status reads the engine's layout from the bus: the facts stream's
// partition count, the leases and member keys in LeaseBucket, and each
// partition consumer's lag.
func Status(ctx context.Context, js jetstream.JetStream) (*EngineStatus, error) {
	consumerFor, single := runner.ConsumerFor, runner.ConsumerName
	n, err := bus.FactPartitions(ctx, js)
	if err != nil {
		return nil, err
	}
	st := &EngineStatus{Partitions: n}
	holders := map[string]string{} // lease key -> holder
	members := map[string]bool{}
	kv, err := js.KeyValue(ctx, LeaseBucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		// no server has run on this bus yet
	case err != nil:
		return nil, fmt.Errorf("lease bucket %s: %w", LeaseBucket, err)
	default:
		st.Leases = true
		lister, err := kv.ListKeys(ctx)
		if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, fmt.Errorf("list leases: %w", err)
		}
		var keys []string
		if lister != nil {
			for k := range lister.Keys() {
				keys = append(keys, k)
			}
			_ = lister.Stop()
		}
		for _, k := range keys {
			e, err := kv.Get(ctx, k)
			if err != nil {
				continue // expired meanwhile
			}
			if strings.HasPrefix(k, memberPrefix) {
				members[string(e.Value())] = true
			} else {
				holders[k] = string(e.Value())
			}
		}
	}
	lag := func(name string) (waiting uint64, unacked int, ok bool) {
		c, err := js.Consumer(ctx, bus.StreamFacts, name)
		if err != nil {
			return 0, 0, false
		}
		info, err := c.Info(ctx)
		if err != nil {
			return 0, 0, false
		}
		return info.NumPending, info.NumAckPending, true
	}
	shares := map[string]*ServerShare{}
	share := func(s string) *ServerShare {
		if shares[s] == nil {
			shares[s] = &ServerShare{Server: s}
		}
		return shares[s]
	}
	for m := range members {
		share(m)
	}
	if n <= 1 {
		w, u, _ := lag(single)
		row := PartitionRow{Consumer: single, Owner: holders[RulesLease], Waiting: w, Unacked: u}
		st.Table = append(st.Table, row)
		switch {
		case row.Owner != "":
			s := share(row.Owner)
			s.Partitions, s.Waiting = 1, w
		case st.Leases:
			st.Unowned = 1
		}
	} else {
		if w, _, ok := lag(single); ok {
			st.LegacyPending = &w
		}
		for p := range n {
			w, u, _ := lag(consumerFor(p))
			row := PartitionRow{Partition: p, Consumer: consumerFor(p), Owner: holders[PartitionLease(p)], Waiting: w, Unacked: u}
			st.Table = append(st.Table, row)
			if row.Owner == "" {
				st.Unowned++
				continue
			}
			s := share(row.Owner)
			s.Partitions++
			s.Waiting += w
		}
	}
	for _, s := range shares {
		st.Servers = append(st.Servers, *s)
	}
	sort.Slice(st.Servers, func(i, j int) bool { return st.Servers[i].Server < st.Servers[j].Server })
	return st, nil
}
