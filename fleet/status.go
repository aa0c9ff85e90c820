package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules"
)

// HostView is one host as `zwatch status --all-hosts` shows it: its last
// heartbeat and the pools of its latest zpool.status and zpool.capacity
// messages in the facts stream.
type HostView struct {
	Host          string       `json:"host"`
	LastHeartbeat *time.Time   `json:"last_heartbeat,omitempty"`
	Version       string       `json:"version,omitempty"`
	Buffer        *BufferStats `json:"buffer,omitempty"`
	StatusAt      *time.Time   `json:"status_at,omitempty"`
	CapacityAt    *time.Time   `json:"capacity_at,omitempty"`
	Pools         []PoolView   `json:"pools"`
}

// PoolView is one pool of a host.
type PoolView struct {
	Name        string  `json:"name"`
	State       string  `json:"state"`
	CapacityPct float64 `json:"capacity_percent"`
	SizeBytes   uint64  `json:"size_bytes,omitempty"`
	// Errors is the pool's read+write+checksum errors on its vdev tree.
	Errors uint64 `json:"errors"`
}

// Age is how old the host's last heartbeat is at now (-1 without one).
func (h HostView) Age(now time.Time) time.Duration {
	if h.LastHeartbeat == nil {
		return -1
	}
	return now.Sub(*h.LastHeartbeat)
}

// lastOneByOne reads each subject's last message, a few at a time: fast
// with thousands of hosts, gentle on the servers.
func lastOneByOne(ctx context.Context, st jetstream.Stream, filters []string, mu *sync.Mutex, apply func(subject string, data []byte)) error {
	var subjects []string
	for _, f := range filters {
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(f))
		if err != nil {
			return fmt.Errorf("list subjects of %s: %w", bus.StreamFacts, err)
		}
		for s := range info.State.Subjects {
			subjects = append(subjects, s)
		}
	}
	sort.Strings(subjects)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var errs []error
	for _, subj := range subjects {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m, err := st.GetLastMsgForSubject(ctx, subj)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgNotFound) {
					errs = append(errs, fmt.Errorf("last message on %s: %w", subj, err))
				}
				return
			}
			apply(subj, m.Data)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Fleet reads every host's view from the bus: the last message per subject
// of zwatch.v1.*.heartbeat, .zpool.status and .zpool.capacity in the facts
// stream (the stream's last-message-per-subject lookup), plus the hosts the
// rule engine remembers whose messages the stream no longer holds.
func Fleet(ctx context.Context, js jetstream.JetStream) ([]HostView, error) {
	st, err := js.Stream(ctx, bus.StreamFacts)
	if err != nil {
		return nil, fmt.Errorf("facts stream %s: %w", bus.StreamFacts, err)
	}
	var mu sync.Mutex
	hosts := map[string]*HostView{}
	get := func(token string) *HostView {
		h := hosts[token]
		if h == nil {
			h = &HostView{Host: token}
			hosts[token] = h
		}
		return h
	}
	reads := viewHandlers()
	apply := func(subject string, data []byte) {
		if read, token, ok := reads.ForSubject(subject); ok {
			applyMsg(read, get(token), data)
		}
	}
	var filters []string
	for _, k := range reads.Kinds() {
		filters = append(filters, k.Filter("*"))
	}
	if filters, err = bus.StoredFilters(ctx, js, filters); err != nil {
		return nil, err
	}
	// One batched read while the fleet is small enough for one answer.
	msgs, err := bus.LastMsgsBatch(ctx, js, bus.StreamFacts, filters)
	switch {
	case err == nil:
		for _, m := range msgs {
			apply(m.Subject, m.Data)
		}
	case errors.Is(err, bus.ErrBatchUnavailable):
		if err := lastOneByOne(ctx, st, filters, &mu, apply); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	rememberedHosts(ctx, js, get)

	out := make([]HostView, 0, len(hosts))
	for _, h := range hosts {
		sort.Slice(h.Pools, func(i, j int) bool { return h.Pools[i].Name < h.Pools[j].Name })
		if h.Pools == nil {
			h.Pools = []PoolView{}
		}
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out, nil
}

// viewHandlers are the kinds of fact a host's view reads, and what it
// takes of each.
func viewHandlers() *facts.Handlers[*HostView] {
	var hs facts.Handlers[*HostView]
	facts.On(&hs, facts.Heartbeat, func(h *HostView, env bus.Envelope, hb *facts.HeartbeatData) error {
		at := env.CollectedAt
		h.LastHeartbeat, h.Version = &at, hb.Version
		if hb.Buffer != nil && hb.Buffer.Max > 0 {
			b := *hb.Buffer
			h.Buffer = &b
		}
		return nil
	})
	facts.On(&hs, facts.ZpoolStatus, func(h *HostView, env bus.Envelope, d *facts.StatusData) error {
		at := env.CollectedAt
		h.StatusAt = &at
		for _, p := range d.Pools {
			if p == nil {
				continue
			}
			pv := pool(h, p.Name)
			pv.State = p.State
			pv.Errors = poolErrors(p)
		}
		return nil
	})
	facts.On(&hs, facts.ZpoolCapacity, func(h *HostView, env bus.Envelope, d *facts.CapacityData) error {
		at := env.CollectedAt
		h.CapacityAt = &at
		for _, p := range d.Pools {
			pv := pool(h, p.Name)
			pv.CapacityPct, pv.SizeBytes = p.CapacityPct, p.SizeBytes
			if pv.State == "" {
				pv.State = p.Health
			}
		}
		return nil
	})
	return &hs
}

// applyMsg takes a host's last message of one kind into its view; a
// message it cannot read changes nothing but, from its envelope, the
// host's name.
func applyMsg(read facts.Handler[*HostView], h *HostView, data []byte) {
	var env bus.Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return
	}
	if env.Host != "" && bus.Token(env.Host) == h.Host {
		h.Host = env.Host
	}
	_ = read.Handle(h, env)
}

func pool(h *HostView, name string) *PoolView {
	for i := range h.Pools {
		if h.Pools[i].Name == name {
			return &h.Pools[i]
		}
	}
	h.Pools = append(h.Pools, PoolView{Name: name})
	return &h.Pools[len(h.Pools)-1]
}

func poolErrors(p *zfs.Pool) uint64 {
	var n uint64
	var walk func(vs []*zfs.Vdev)
	walk = func(vs []*zfs.Vdev) {
		for _, v := range vs {
			if v == nil {
				continue
			}
			n += v.ReadErrors + v.WriteErrors + v.ChecksumErrors
			walk(v.Children)
		}
	}
	walk(p.Vdevs)
	walk(p.Logs)
	walk(p.Special)
	walk(p.Dedup)
	return n
}

// rememberedHosts adds hosts from the rule engine's state bucket (keys
// rules.host.<host>, fields "host" and "heartbeat"), so a host silent for
// longer than the facts stream keeps messages still shows.
func rememberedHosts(ctx context.Context, js jetstream.JetStream, get func(string) *HostView) {
	states, err := bus.KVLast(ctx, js, bus.StateBucket, "rules.host.>")
	if err != nil {
		return
	}
	for _, v := range states {
		host, heartbeat, ok := rules.HostHeartbeat(v.Data)
		if !ok {
			continue
		}
		h := get(bus.Token(host))
		if h.LastHeartbeat == nil && heartbeat != nil {
			h.LastHeartbeat = heartbeat
		}
	}
}
