package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
)

// keyPrefix names the rule engine's keys in bus.StateBucket: one key per
// host, "rules.host.<host token>", holding that host's hostState as JSON.
const keyPrefix = "rules.host."

func stateKey(host string) string { return keyPrefix + bus.Token(host) }

// ErrStateConflict means another engine changed a host's state since this
// one read it (several servers share the "rules" consumer). The caller
// reloads and processes the message again.
var ErrStateConflict = errors.New("rule state changed by another engine")

// Load reads every host's state from kv, replacing what the engine holds.
func (e *Engine) Load(ctx context.Context, kv jetstream.KeyValue) error {
	all, err := ListStateKeys(ctx, kv)
	if err != nil {
		return err
	}
	return e.LoadKeys(ctx, kv, all)
}

// ListStateKeys lists every key of the state bucket kv (the hosts' states
// and the other keys kept there), for LoadKeys.
func ListStateKeys(ctx context.Context, kv jetstream.KeyValue) ([]string, error) {
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list rule state keys: %w", err)
	}
	var all []string
	for k := range lister.Keys() {
		all = append(all, k)
	}
	return all, nil
}

// LoadKeys reads the states of the hosts among the bucket's keys all (as
// ListStateKeys lists them) that are this engine's (SetHostFilter), each
// replacing what the engine holds of that host: partition engines that
// start together share one listing (Load lists the keys itself).
func (e *Engine) LoadKeys(ctx context.Context, kv jetstream.KeyValue, all []string) error {
	var keys []string
	for _, k := range all {
		if token, ok := strings.CutPrefix(k, keyPrefix); ok && (e.owns == nil || e.owns(token)) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		h, err := loadHost(ctx, kv, k)
		if err != nil {
			return err
		}
		if h == nil {
			continue
		}
		e.rules.dropUnowned(h)
		if old := e.hosts[h.Host]; old != nil {
			// Keep the in-memory facts; the persisted state wins.
			h.pools, h.capacity, h.smart = old.pools, old.capacity, old.smart
		}
		e.hosts[h.Host] = h
	}
	return nil
}

func loadHost(ctx context.Context, kv jetstream.KeyValue, key string) (*hostState, error) {
	ent, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read rule state %s: %w", key, err)
	}
	h := decodeHost(ent.Value())
	if h != nil {
		h.rev, h.savedSum = ent.Revision(), stateSum(ent.Value())
		h.savedSubstance, _ = substanceSum(h)
	}
	return h, nil
}

// decodeHost reads one host's saved state. An unreadable or older state is
// nil: alerts may re-fire once, which beats misreading what was sent. The
// rule memories a state of 41d2458 kept in keys of their own are read
// along and moved into Memory (legacyMemory).
func decodeHost(data []byte) *hostState {
	js, err := StateJSON(data)
	if err != nil {
		return nil
	}
	var saved struct {
		hostState
		legacyMemory
	}
	if err := json.Unmarshal(js, &saved); err != nil || saved.Version != stateVersion || saved.Host == "" {
		return nil
	}
	h := &saved.hostState
	saved.legacyMemory.moveInto(h)
	moveLegacyCRC(h)
	h.fixMaps()
	return h
}

// Save writes the state of every host changed since the last Save, with
// optimistic concurrency on the key's revision.
func (e *Engine) Save(ctx context.Context, kv jetstream.KeyValue) error {
	return e.Write(ctx, kv, false, false, time.Now())
}

// Overwrite is Save without the revision check, for an entry that cannot
// be read back (Save's check then fails for ever). One engine at a time
// holds the rules lease, so nobody else writes these keys.
func (e *Engine) Overwrite(ctx context.Context, kv jetstream.KeyValue) error {
	return e.Write(ctx, kv, true, false, time.Now())
}

// saveParallel bounds the host states written at once. Each write is a
// round trip to the server (to a quorum of it in a cluster) and the writes
// of different hosts do not depend on each other: one after the other they
// were the engine's ceiling (docs/benchmarks.md, fleet).
const saveParallel = 16

// Write saves the hosts marked dirty or touched, at now; with overwrite,
// without the revision check (as Overwrite). With changedOnly, a host
// whose state differs from the saved one only in bookkeeping
// (substanceSum) is left touched instead, for a later write, unless its
// bookkeeping is due (bookkeepingDue at now). A host only touched, and not
// due, is not even hashed then: nothing but its bookkeeping changed
// (hashing every touched host's state at every batch was most of an
// engine's own CPU while it drained a backlog).
func (e *Engine) Write(ctx context.Context, kv jetstream.KeyValue, overwrite, changedOnly bool, now time.Time) error {
	type toWrite struct {
		h       *hostState
		partial bool // changedOnly, for this host
	}
	var dirty []toWrite
	for _, h := range e.hosts {
		full := !changedOnly || h.rev == 0 || h.unanswered != nil || h.bookkeepingDue(now)
		if h.dirty || h.touched && full {
			dirty = append(dirty, toWrite{h, !full})
		}
	}
	if len(dirty) == 0 {
		return nil
	}
	// In name order, so that the error reported is the same from run to run.
	slices.SortFunc(dirty, func(a, b toWrite) int { return strings.Compare(a.h.Host, b.h.Host) })
	errs := make([]error, len(dirty))
	slots := make(chan struct{}, saveParallel)
	var wg sync.WaitGroup
	for i, w := range dirty {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = writeHost(ctx, kv, w.h, overwrite, w.partial, now)
		})
	}
	wg.Wait()
	// A conflict first: the caller reloads on it, whatever else failed.
	for _, err := range errs {
		if errors.Is(err, ErrStateConflict) {
			return err
		}
	}
	return errors.Join(errs...)
}

// writeHost saves one host's state; on success it is clean at its new
// revision, on failure it stays dirty for the next Save. A write whose
// answer was lost is remembered: if it landed, the next write's conflict
// is with itself (adoptOwnWrite).
func writeHost(ctx context.Context, kv jetstream.KeyValue, h *hostState, overwrite, changedOnly bool, now time.Time) error {
	substance, err := substanceSum(h)
	if err != nil {
		return err
	}
	if changedOnly && substance == h.savedSubstance && h.rev != 0 && h.unanswered == nil {
		// Marked dirty, but only the bookkeeping differs from what the
		// bucket holds (a rule re-evaluated to the same alerts).
		h.dirty, h.touched = false, true
		return nil
	}
	data, err := encodeState(h)
	if err != nil {
		return err
	}
	sum := stateSum(data)
	if sum == h.savedSum && h.rev != 0 && h.unanswered == nil {
		h.dirty, h.touched, h.bookkeptAt = false, false, now // what the bucket holds already
		return nil
	}
	key := stateKey(h.Host)
	rev, err := putHost(ctx, kv, key, data, h.rev, overwrite)
	if isConflict(err) && adoptOwnWrite(ctx, kv, key, h) {
		rev, err = putHost(ctx, kv, key, data, h.rev, false)
	}
	if err != nil {
		if isConflict(err) {
			return fmt.Errorf("save rule state of %s: %w", h.Host, ErrStateConflict)
		}
		h.unanswered = data
		return fmt.Errorf("save rule state of %s: %w", h.Host, err)
	}
	h.rev, h.dirty, h.touched, h.unanswered, h.savedSum, h.savedSubstance = rev, false, false, nil, sum, substance
	h.bookkeptAt = now
	return nil
}

// putHost writes one host's state: unconditionally, as a new key, or over
// revision rev.
func putHost(ctx context.Context, kv jetstream.KeyValue, key string, data []byte, rev uint64, overwrite bool) (uint64, error) {
	switch {
	case overwrite:
		return kv.Put(ctx, key, data)
	case rev == 0:
		return kv.Create(ctx, key, data)
	default:
		return kv.Update(ctx, key, data, rev)
	}
}

func isConflict(err error) bool {
	return err != nil && (errors.Is(err, jetstream.ErrKeyExists) || strings.Contains(err.Error(), "wrong last sequence"))
}

// adoptOwnWrite reports whether the key's newer revision holds exactly the
// write of h whose answer was lost, and then takes that revision as h's.
// Without it a slow store (a write that timed out but landed) looked like
// another engine's change: the engine reloaded the older state it had
// written and paged an alert it had already paged as new.
func adoptOwnWrite(ctx context.Context, kv jetstream.KeyValue, key string, h *hostState) bool {
	if h.unanswered == nil {
		return false
	}
	ent, err := kv.Get(ctx, key)
	if err != nil || !bytes.Equal(ent.Value(), h.unanswered) {
		return false
	}
	h.rev, h.unanswered = ent.Revision(), nil
	return true
}

// Active reads the current alerts — pending and firing, inhibited ones
// included, silenced ones marked — of every host from the state bucket,
// for `zwatch alerts`.
func Active(ctx context.Context, b *bus.Bus) ([]alert.Alert, error) {
	c, err := ReadCurrent(ctx, b)
	if err != nil {
		return nil, err
	}
	return c.Active(), nil
}

// Unsaved reports whether some host's state changed since the last save
// in a way that must be saved before its facts are acknowledged.
func (e *Engine) Unsaved() bool {
	for _, h := range e.hosts {
		if h.dirty {
			return true
		}
	}
	return false
}

// BookkeepingDue reports whether some host's bookkeeping alone waits for
// a save and is due at now.
func (e *Engine) BookkeepingDue(now time.Time) bool {
	for _, h := range e.hosts {
		if h.bookkeepingDue(now) {
			return true
		}
	}
	return false
}

// Touched reports whether some host's bookkeeping (touched) waits for a save.
func (e *Engine) Touched() bool {
	for _, h := range e.hosts {
		if h.touched {
			return true
		}
	}
	return false
}
