package delivery

import (
	"context"
	"log/slog"

	"github.com/zwatch/zwatch/internal/clock"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// LeaseFunc runs fn only while this process holds the lease name, competing
// for it again whenever it is lost, until ctx ends; fn's ctx ends when the
// lease is lost. It returns nil when ctx ended, and an error when fn
// returned on its own. fleet.Leaser makes one.
type LeaseFunc func(ctx context.Context, name string, fn func(ctx context.Context) error) error

// AnswerLease is the lease an answer reader of account (the channel's
// channel.SharedAnswers digest) runs under: one key per account in the
// lease bucket, so every server of a fleet names it alike, and no secret
// appears in it.
func AnswerLease(typ, account string) string { return "answers." + typ + "." + account }

// readAnswers runs the channel's answer reader until ctx ends. A reader of
// a shared account runs under opts.Lease: every server runs the same
// channels, and two readers of one Telegram bot are refused (409) and
// split its taps, two of one Matrix login answer each reaction twice.
func readAnswers(ctx context.Context, a channel.Answering, ch *notifiers.Channel, opts Options, log *slog.Logger) {
	read := func(ctx context.Context) error { return a.Answers(ctx, opts.Answers.Do, log) }
	acc, shared := ch.Sender.(channel.SharedAnswers)
	if !shared || opts.Lease == nil {
		_ = read(ctx)
		return
	}
	name := AnswerLease(ch.Type, acc.AnswerAccount())
	log = log.With("lease", name)
	for failures := 1; ctx.Err() == nil; failures++ {
		err := opts.Lease(ctx, name, func(lctx context.Context) error {
			log.Info("answers: this server now reads the channel's answers")
			err := read(lctx)
			if ctx.Err() == nil && lctx.Err() != nil {
				log.Info("answers: lease lost; this server stops reading the channel's answers until it wins the lease again")
			}
			return err
		})
		if err == nil || ctx.Err() != nil {
			return
		}
		// The lease bucket is out of reach, or the reader stopped by
		// itself: not a reason to spin.
		log.Warn("answers: cannot read the channel's answers under the lease; trying again", "err", err, "retry_in", answer.RetryWait(failures))
		_ = clock.Sleep(ctx, answer.RetryWait(failures))
	}
}
