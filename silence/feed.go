package silence

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ReadEvery is how often a Feed reads the silences from the store; it also
// reads them just before a notification goes out (BeforeFlush), so a
// silence stored before the page is due always counts.
const ReadEvery = 5 * time.Second

// Store is where a Feed reads the silences and records what it did.
type Store struct {
	JS     jetstream.JetStream
	KV     jetstream.KeyValue // the bucket named Bucket
	Bucket string
	Log    *slog.Logger
	// Timeout bounds each try; a read that failed is not tried again
	// within RetryEvery, so that a failing store is not asked at every
	// flush.
	Timeout, RetryEvery time.Duration
}

// Feed is what a rule engine's runner knows of the silences: the list it
// applies, read from the store by the refresh policy, and the expiry
// notices under way. The zero value is ready; it is not safe for
// concurrent use.
type Feed struct {
	// readAt is when they were last read (real time); downAt when a read
	// last failed.
	readAt, downAt time.Time
	list           []Silence
	// noticing are the silences whose expiry notice is queued or was taken
	// by the outbox and is being recorded: not queued again.
	noticing map[string]bool
	// fresh: read during this tick already.
	fresh bool
}

// List is the silences last read.
func (f *Feed) List() []Silence { return f.list }

// NewTick starts a tick: the next BeforeFlush reads the silences again.
func (f *Feed) NewTick() { f.fresh = false }

// BeforeFlush reads the silences once per tick before a notification is
// made, so that one stored a moment ago is applied to it; it reports
// whether a new list was read.
func (f *Feed) BeforeFlush(ctx context.Context, st Store, now time.Time) bool {
	if f.fresh {
		return false
	}
	f.fresh = true
	return f.Read(ctx, st, true, now)
}

// Read refreshes the silences from the store every ReadEvery, or at once
// with force, and reports whether it read a new list. On failure the list
// read before stays. now is the engine's clock, which says which expiry
// notices are still due.
func (f *Feed) Read(ctx context.Context, st Store, force bool, now time.Time) bool {
	wall := time.Now()
	if !f.downAt.IsZero() && wall.Sub(f.downAt) < st.RetryEvery {
		return false
	}
	if !force && wall.Sub(f.readAt) < ReadEvery {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, st.Timeout)
	list, skipped, err := List(rctx, st.JS, st.Bucket)
	cancel()
	if err != nil {
		if f.downAt.IsZero() {
			st.Log.Error("rules: cannot read the silences; applying those read before", "err", err)
		}
		f.downAt = wall
		return false
	}
	for _, err := range skipped {
		st.Log.Warn("rules: ignoring a silence", "err", err)
	}
	if !f.downAt.IsZero() {
		st.Log.Info("rules: silences read again")
	}
	f.readAt, f.downAt, f.list = wall, time.Time{}, list
	for id := range f.noticing {
		if s := f.byID(id); s == nil || !s.NoticeDue(now) {
			delete(f.noticing, id) // recorded (or removed): done
		}
	}
	return true
}

func (f *Feed) byID(id string) *Silence {
	for i := range f.list {
		if f.list[i].ID == id {
			return &f.list[i]
		}
	}
	return nil
}

// NoticesDue are the silences that ended by themselves and whose expiry
// notice is to be queued now; each is returned once while its notice is
// under way (until Noticed records it, or it is removed).
func (f *Feed) NoticesDue(now time.Time) []*Silence {
	var out []*Silence
	for i := range f.list {
		s := &f.list[i]
		if !s.NoticeDue(now) || f.noticing[s.ID] {
			continue
		}
		if f.noticing == nil {
			f.noticing = map[string]bool{}
		}
		f.noticing[s.ID] = true
		out = append(out, s)
	}
	return out
}

// Noticed records, once the outbox took a silence's expiry notice, that it
// was sent: a compare-and-set on the silence's revision, so that of two
// engines (or a restart) only one records it. Should this fail, the notice
// may be published again later with the same ID, which the outbox drops
// within its duplicate window.
func (f *Feed) Noticed(ctx context.Context, st Store, id string, now time.Time) {
	for try := 0; try < 2; try++ {
		sctx, cancel := context.WithTimeout(ctx, st.Timeout)
		s, err := Get(sctx, st.KV, id)
		if err == nil && s.NoticeDue(now) {
			_, err = MarkNoticed(sctx, st.KV, s, now)
		}
		cancel()
		switch {
		case errors.Is(err, ErrChanged):
			continue // changed meanwhile: read it again
		case errors.Is(err, ErrNotFound):
			return
		case err != nil:
			st.Log.Error("rules: cannot record that a silence's expiry notice was sent; it may be sent again", "silence", id, "err", err)
		}
		return
	}
}

// RemoveStale deletes the silences expired for longer than Retention. One
// engine of a fleet does it (the runner's global one).
func (f *Feed) RemoveStale(ctx context.Context, st Store, now time.Time) {
	for _, s := range f.list {
		if !s.Stale(now) {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, st.Timeout)
		err := Remove(rctx, st.KV, s)
		cancel()
		if err != nil {
			st.Log.Warn("rules: cannot remove an old silence", "silence", s.ID, "err", err)
			return
		}
		st.Log.Info("silence removed after its retention", "silence", s.ID, "ended", s.EndsAt)
	}
}
