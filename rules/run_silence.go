package rules

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/silence"
)

// silenceEvery is how often the runner reads the silences from the state
// bucket; it also reads them just before a notification goes out, so a
// silence stored before the page is due always counts.
const silenceEvery = 5 * time.Second

// silences is what the runner knows of the silences.
type silences struct {
	// readAt is when they were last read (real time); downAt when a read
	// last failed, so that a failing store is not asked at every flush.
	readAt, downAt time.Time
	list           []silence.Silence
	// noticing are the silences whose expiry notice is queued or was taken
	// by the outbox and is being recorded: not queued again.
	noticing map[string]bool
	// fresh: read during this tick already.
	fresh bool
}

// beforeFlush reads the silences once per tick before a notification is
// made, so that one stored a moment ago is applied to it.
func (r *runner) beforeFlush(ctx context.Context) func() {
	return func() {
		if !r.sil.fresh {
			r.sil.fresh = true
			r.readSilences(ctx, true)
		}
	}
}

// readSilences refreshes the engine's silences from the state bucket: every
// silenceEvery, or at once with force. On failure the engine keeps those
// it has.
func (r *runner) readSilences(ctx context.Context, force bool) {
	wall := time.Now()
	if !r.sil.downAt.IsZero() && wall.Sub(r.sil.downAt) < retryStorageEvery {
		return
	}
	if !force && wall.Sub(r.sil.readAt) < silenceEvery {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, storageTimeout)
	list, skipped, err := silence.List(rctx, r.b.JS, bus.StateBucket)
	cancel()
	if err != nil {
		if r.sil.downAt.IsZero() {
			r.log.Error("rules: cannot read the silences; applying those read before", "err", err)
		}
		r.sil.downAt = wall
		return
	}
	for _, err := range skipped {
		r.log.Warn("rules: ignoring a silence", "err", err)
	}
	if !r.sil.downAt.IsZero() {
		r.log.Info("rules: silences read again")
	}
	r.sil.readAt, r.sil.downAt, r.sil.list = wall, time.Time{}, list
	r.e.SetSilences(list)
	for id := range r.sil.noticing {
		if s := r.silenceByID(id); s == nil || !s.NoticeDue(r.now()) {
			delete(r.sil.noticing, id) // recorded (or removed): done
		}
	}
	if r.global() {
		r.removeStale(ctx)
	}
}

func (r *runner) silenceByID(id string) *silence.Silence {
	for i := range r.sil.list {
		if r.sil.list[i].ID == id {
			return &r.sil.list[i]
		}
	}
	return nil
}

// queueExpiryNotices queues the notice of each silence that ended by
// itself, ahead of the pages its end lets through.
func (r *runner) queueExpiryNotices(now time.Time) {
	for i := range r.sil.list {
		s := &r.sil.list[i]
		if !s.NoticeDue(now) || r.sil.noticing[s.ID] {
			continue
		}
		if r.sil.noticing == nil {
			r.sil.noticing = map[string]bool{}
		}
		r.sil.noticing[s.ID] = true
		host := r.opts.Host
		if host == "" {
			host, _ = os.Hostname()
		}
		n := r.e.expiryNotice(s, host, now)
		r.log.Info("silence expired", "silence", s.ID, "matchers", s.Matchers.String(), "summary", n.Alerts[0].Summary)
		r.pending = append(r.pending, pendingNote{n: n, silence: s.ID})
	}
}

// noticed records, once the outbox took a silence's expiry notice, that it
// was sent: a compare-and-set on the silence's revision, so that of two
// engines (or a restart) only one records it. Should this fail, the notice
// may be published again later with the same ID, which the outbox drops
// within its duplicate window.
func (r *runner) noticed(ctx context.Context, id string, now time.Time) {
	for try := 0; try < 2; try++ {
		sctx, cancel := context.WithTimeout(ctx, storageTimeout)
		s, err := silence.Get(sctx, r.kv, id)
		if err == nil && s.NoticeDue(now) {
			_, err = silence.MarkNoticed(sctx, r.kv, s, now)
		}
		cancel()
		switch {
		case errors.Is(err, silence.ErrChanged):
			continue // changed meanwhile: read it again
		case errors.Is(err, silence.ErrNotFound):
			return
		case err != nil:
			r.log.Error("rules: cannot record that a silence's expiry notice was sent; it may be sent again", "silence", id, "err", err)
		}
		return
	}
}

// removeStale deletes the silences expired for longer than
// silence.Retention.
func (r *runner) removeStale(ctx context.Context) {
	now := r.now()
	for _, s := range r.sil.list {
		if !s.Stale(now) {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, storageTimeout)
		err := silence.Remove(rctx, r.kv, s)
		cancel()
		if err != nil {
			r.log.Warn("rules: cannot remove an old silence", "silence", s.ID, "err", err)
			return
		}
		r.log.Info("silence removed after its retention", "silence", s.ID, "ended", s.EndsAt)
	}
}
