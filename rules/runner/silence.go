package runner

import (
	"context"
	"os"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/silence"
)

// The runner's silences are a silence.Feed: it reads them from the state
// bucket, hands them to the engine, queues the expiry notices and removes
// stale ones. This file wires the feed to the runner.

// silences is what the runner knows of the silences.
type silences = silence.Feed

func (r *runner) silenceStore() silence.Store {
	return silence.Store{JS: r.b.JS, KV: r.kv, Bucket: bus.StateBucket, Log: r.log, Timeout: storageTimeout, RetryEvery: retryStorageEvery}
}

// beforeFlush reads the silences once per tick before a notification is
// made, so that one stored a moment ago is applied to it.
func (r *runner) beforeFlush(ctx context.Context) func() {
	return func() {
		if r.sil.BeforeFlush(ctx, r.silenceStore(), r.now()) {
			r.silencesRead(ctx)
		}
	}
}

// readSilences refreshes the engine's silences from the state bucket: every
// silence.ReadEvery, or at once with force. On failure the engine keeps
// those it has.
func (r *runner) readSilences(ctx context.Context, force bool) {
	if r.sil.Read(ctx, r.silenceStore(), force, r.now()) {
		r.silencesRead(ctx)
	}
}

func (r *runner) silencesRead(ctx context.Context) {
	r.e.SetSilences(r.sil.List())
	if r.global() {
		r.sil.RemoveStale(ctx, r.silenceStore(), r.now())
	}
}

// queueExpiryNotices queues the notice of each silence that ended by
// itself, ahead of the pages its end lets through.
func (r *runner) queueExpiryNotices(now time.Time) {
	for _, s := range r.sil.NoticesDue(now) {
		host := r.opts.Host
		if host == "" {
			host, _ = os.Hostname()
		}
		n := r.e.ExpiryNotice(s, host, now)
		r.log.Info("silence expired", "silence", s.ID, "matchers", s.Matchers.String(), "summary", n.Alerts[0].Summary)
		r.pending = append(r.pending, pendingNote{n: n, silence: s.ID})
	}
}

// noticed records that the outbox took a silence's expiry notice
// (silence.Feed.Noticed).
func (r *runner) noticed(ctx context.Context, id string, now time.Time) {
	r.sil.Noticed(ctx, r.silenceStore(), id, now)
}
