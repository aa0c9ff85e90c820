package silence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// KeyPrefix names the silences in bus.StateBucket: "silence.<ID>". The
// rule engine's keys are "rules.…", so neither reads the other's.
const KeyPrefix = "silence."

// MaxSilences bounds the silences kept, expired ones included: far more
// than a person manages, small enough to read at every check.
const MaxSilences = 1000

// ErrChanged: the silence was changed since it was read (another command
// or server); read it again.
var ErrChanged = errors.New("the silence was changed meanwhile")

// ErrNotFound: no silence has that ID.
var ErrNotFound = errors.New("no such silence")

func key(id string) string { return KeyPrefix + id }

// Create stores a new silence. The ID must be new: the bucket refuses an
// existing key.
func Create(ctx context.Context, kv jetstream.KeyValue, s *Silence) error {
	if err := s.Validate(); err != nil {
		return err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode silence %s: %w", s.ID, err)
	}
	rev, err := kv.Create(ctx, key(s.ID), data)
	if err != nil {
		return fmt.Errorf("store silence %s in %s: %w", s.ID, kv.Bucket(), err)
	}
	s.rev = rev
	return nil
}

// List reads every silence from the state bucket in one batched read of the
// keys under KeyPrefix (no watcher: the engine asks every few seconds),
// sorted by start. An entry that cannot be read is skipped and reported in
// skipped, so one bad entry does not hide the others.
func List(ctx context.Context, js jetstream.JetStream, bucket string) (list []Silence, skipped []error, err error) {
	vals, err := bus.KVLast(ctx, js, bucket, KeyPrefix+"*")
	if err != nil {
		return nil, nil, fmt.Errorf("read silences from %s: %w", bucket, err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(list) >= MaxSilences {
			skipped = append(skipped, fmt.Errorf("more than %d silences: the rest are not read", MaxSilences))
			break
		}
		s, err := decodeValue(k, vals[k].Data, vals[k].Revision)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool {
		if !list[i].StartsAt.Equal(list[j].StartsAt) {
			return list[i].StartsAt.Before(list[j].StartsAt)
		}
		return list[i].ID < list[j].ID
	})
	return list, skipped, nil
}

func decode(e jetstream.KeyValueEntry) (Silence, error) {
	return decodeValue(e.Key(), e.Value(), e.Revision())
}

func decodeValue(k string, data []byte, rev uint64) (Silence, error) {
	var s Silence
	if err := json.Unmarshal(data, &s); err != nil {
		return Silence{}, fmt.Errorf("silence entry %s: %w", k, err)
	}
	if err := s.Validate(); err != nil {
		return Silence{}, fmt.Errorf("silence entry %s: %w", k, err)
	}
	if key(s.ID) != k {
		return Silence{}, fmt.Errorf("silence entry %s holds silence %s", k, s.ID)
	}
	s.rev = rev
	return s, nil
}

// Get reads one silence by its full ID.
func Get(ctx context.Context, kv jetstream.KeyValue, id string) (Silence, error) {
	if !validID(id) {
		return Silence{}, fmt.Errorf("silence %q: %w", id, ErrNotFound)
	}
	e, err := kv.Get(ctx, key(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Silence{}, fmt.Errorf("silence %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Silence{}, fmt.Errorf("read silence %s: %w", id, err)
	}
	return decode(e)
}

// Find picks the silence whose ID is id or starts with it, among list.
func Find(list []Silence, id string) (Silence, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if id == "" {
		return Silence{}, errors.New("silence ID is empty: give the ID `zwatch silence list` shows (any unique start of it)")
	}
	var found []Silence
	for _, s := range list {
		if s.ID == id {
			return s, nil
		}
		if strings.HasPrefix(s.ID, id) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return Silence{}, fmt.Errorf("silence %q: %w (see zwatch silence list --expired)", id, ErrNotFound)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, s := range found {
		ids[i] = s.ID
	}
	return Silence{}, fmt.Errorf("silence ID %q is the start of %d silences (%s): give more of it", id, len(found), strings.Join(ids, ", "))
}

// update writes s over the revision it was read at.
func update(ctx context.Context, kv jetstream.KeyValue, s *Silence) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode silence %s: %w", s.ID, err)
	}
	rev, err := kv.Update(ctx, key(s.ID), data, s.rev)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || strings.Contains(err.Error(), "wrong last sequence") {
			return fmt.Errorf("silence %s: %w", s.ID, ErrChanged)
		}
		return fmt.Errorf("store silence %s: %w", s.ID, err)
	}
	s.rev = rev
	return nil
}

// Expire ends s at now, as Alertmanager does: an active silence ends now,
// a pending one starts and ends now, an expired one stays as it is
// (expiring twice is no error). by names who ended it.
func Expire(ctx context.Context, kv jetstream.KeyValue, s Silence, by string, now time.Time) (Silence, error) {
	switch s.State(now) {
	case Expired:
		return s, nil
	case Pending:
		s.StartsAt = now
	}
	s.EndsAt, s.UpdatedAt, s.ExpiredBy = now, now, by
	if s.ExpiredBy == "" {
		s.ExpiredBy = "unknown"
	}
	return s, update(ctx, kv, &s)
}

// MarkNoticed records that the expiry notice of s went out, over the
// revision s was read at: of two engines, only one records it.
func MarkNoticed(ctx context.Context, kv jetstream.KeyValue, s Silence, now time.Time) (Silence, error) {
	at := now
	s.Noticed, s.UpdatedAt = &at, now
	return s, update(ctx, kv, &s)
}

// Remove deletes an expired silence past Retention, unless it was changed
// since it was read.
func Remove(ctx context.Context, kv jetstream.KeyValue, s Silence) error {
	if err := kv.Purge(ctx, key(s.ID), jetstream.LastRevision(s.rev)); err != nil {
		return fmt.Errorf("remove silence %s: %w", s.ID, err)
	}
	return nil
}

// NoticeDue reports whether s ended by itself and its expiry notice has
// not been sent.
func (s *Silence) NoticeDue(now time.Time) bool {
	return s.State(now) == Expired && s.ExpiredBy == "" && s.Noticed == nil
}

// Stale: expired longer than Retention ago, its notice (if it needed one)
// sent.
func (s *Silence) Stale(now time.Time) bool {
	return s.State(now) == Expired && now.Sub(s.EndsAt) > Retention && !s.NoticeDue(now)
}
