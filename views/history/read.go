package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// fetchBatch is how many messages one fetch asks for.
const fetchBatch = 512

// errReadLimit says a read stopped at its bound.
var errReadLimit = errors.New("history read stopped at its bound")

// readMsgs calls fn for each message on subjects of stream, oldest first,
// from start (storage time; zero: the beginning), at most limit messages:
// past that it stops with errReadLimit. It reads through a short-lived
// consumer it removes again, so that a page's queries leave nothing behind.
func readMsgs(ctx context.Context, js jetstream.JetStream, stream string, subjects []string, start time.Time, limit int, fn func(jetstream.Msg) error) error {
	cc := jetstream.ConsumerConfig{
		FilterSubjects: subjects, AckPolicy: jetstream.AckNonePolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy, MemoryStorage: true,
		InactiveThreshold: 30 * time.Second, Replicas: 1,
	}
	if !start.IsZero() {
		cc.DeliverPolicy, cc.OptStartTime = jetstream.DeliverByStartTimePolicy, &start
	}
	cons, err := js.CreateConsumer(ctx, stream, cc)
	if err != nil {
		return fmt.Errorf("read history stream %s: %w", stream, err)
	}
	defer func() {
		// A consumer left behind goes by itself after InactiveThreshold.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = js.DeleteConsumer(dctx, stream, cons.CachedInfo().Name)
	}()
	pending := int(cons.CachedInfo().NumPending)
	read := 0
	for pending > 0 {
		if read >= limit {
			return errReadLimit
		}
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		batch, err := cons.Fetch(min(fetchBatch, pending, limit-read), jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			return fmt.Errorf("read history stream %s: %w", stream, err)
		}
		got, err := readBatch(batch, &pending, fn)
		cancel()
		read += got
		if err != nil {
			return fmt.Errorf("read history stream %s: %w", stream, err)
		}
		if got == 0 {
			// What was pending expired in between.
			return ctx.Err()
		}
	}
	return nil
}

// readBatch calls fn for each message of a fetch and keeps what is still
// pending.
func readBatch(batch jetstream.MessageBatch, pending *int, fn func(jetstream.Msg) error) (int, error) {
	got := 0
	for m := range batch.Messages() {
		got++
		meta, err := m.Metadata()
		if err != nil {
			return got, err
		}
		*pending = int(meta.NumPending)
		if err := fn(m); err != nil {
			return got, err
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
		return got, err
	}
	return got, nil
}

// lastMsg is the newest message on subject, nil when there is none.
func lastMsg(ctx context.Context, js jetstream.JetStream, stream, subject string) (*jetstream.RawStreamMsg, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("history stream %s: %w", stream, err)
	}
	m, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history stream %s, last of %s: %w", stream, subject, err)
	}
	return m, nil
}
