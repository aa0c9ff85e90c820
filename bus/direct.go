package bus

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// Reads for the views (status page, /metrics, `zwatch alerts`): many
// messages in one request, through the servers' batched direct get
// (nats-server 2.11 and later, streams with AllowDirect). One message per
// request costs a round trip each, and on a slow CPU (an Atom, an emulated
// guest) a page of fifty notifications and twenty facts took seconds.

// MaxLastMsgs is the most subjects one LastMsgs request answers: the
// server's own limit for a multi-subject direct get. MsgRange reads at most
// as many messages per call.
const MaxLastMsgs = 1024

// syncQueueLen is how many messages the connection queues for one
// synchronous subscription, which is what each batched read's answers
// arrive on. nats.go's default of 65,536 makes every read allocate a
// 512 KiB channel: with the status page's snapshot every 5 s that was
// 400 KB/s of garbage on an idle daemon, a collection every 5 s and a
// heap 1.5 MB larger (docs/benchmarks.md). A read is answered by at most
// MaxLastMsgs messages and an end marker, so twice that never overflows.
const syncQueueLen = 2 * MaxLastMsgs

// LastMsgs returns the newest message of every subject of stream that
// matches one of subjects (wildcards allowed), sorted by subject. A server
// without batched direct gets, or more matches than MaxLastMsgs, is read one
// subject at a time instead.
func LastMsgs(ctx context.Context, js jetstream.JetStream, stream string, subjects []string) ([]*jetstream.RawStreamMsg, error) {
	out, err := LastMsgsBatch(ctx, js, stream, subjects)
	if errors.Is(err, ErrBatchUnavailable) {
		return lastMsgsOneByOne(ctx, js, stream, subjects)
	}
	return out, err
}

// ErrBatchUnavailable: the server cannot answer with one batch (see
// LastMsgsBatch); read one message at a time instead.
var ErrBatchUnavailable = errors.New("batched direct get unavailable")

// LastMsgsBatch is LastMsgs in one request only: ErrBatchUnavailable when
// the server has no batched direct get, the stream no AllowDirect, or more
// than MaxLastMsgs subjects match.
func LastMsgsBatch(ctx context.Context, js jetstream.JetStream, stream string, subjects []string) ([]*jetstream.RawStreamMsg, error) {
	out, err := collect(ctx)(jetstreamext.GetLastMsgsFor(ctx, js, stream, subjects))
	if err == nil {
		sort.Slice(out, func(i, j int) bool { return out[i].Subject < out[j].Subject })
		return out, nil
	}
	if batchUnavailable(err) {
		return nil, fmt.Errorf("last messages of %s: %w (%v)", stream, ErrBatchUnavailable, err)
	}
	return nil, fmt.Errorf("last messages of %s: %w", stream, err)
}

// MsgRange returns up to n messages of stream from sequence first on,
// oldest first; n is capped at MaxLastMsgs.
func MsgRange(ctx context.Context, js jetstream.JetStream, stream string, first uint64, n int) ([]*jetstream.RawStreamMsg, error) {
	if n <= 0 {
		return nil, nil
	}
	n = min(n, MaxLastMsgs)
	if first == 0 {
		first = 1
	}
	out, err := collect(ctx)(jetstreamext.GetBatch(ctx, js, stream, n, jetstreamext.GetBatchSeq(first)))
	if err == nil {
		return out, nil
	}
	if !batchUnavailable(err) {
		return nil, fmt.Errorf("messages %d.. of %s: %w", first, stream, err)
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", stream, err)
	}
	last := st.CachedInfo().State.LastSeq
	for seq := first; seq <= last && len(out) < n; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // deleted or expired in between
		}
		if err != nil {
			return out, fmt.Errorf("message %d of %s: %w", seq, stream, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// KVValue is one key's current value and its revision.
type KVValue struct {
	Data     []byte
	Revision uint64
}

// KVLast returns the current value of every key of bucket that matches
// filter (a subject filter over the keys, e.g. "rules.host.>"), deleted and
// purged keys left out.
func KVLast(ctx context.Context, js jetstream.JetStream, bucket, filter string) (map[string]KVValue, error) {
	prefix := "$KV." + bucket + "."
	msgs, err := LastMsgs(ctx, js, "KV_"+bucket, []string{prefix + filter})
	if err != nil {
		return nil, err
	}
	out := make(map[string]KVValue, len(msgs))
	for _, m := range msgs {
		switch m.Header.Get("KV-Operation") {
		case "DEL", "PURGE":
			continue
		}
		if len(m.Subject) > len(prefix) {
			out[m.Subject[len(prefix):]] = KVValue{Data: m.Data, Revision: m.Sequence}
		}
	}
	return out, nil
}

// collect drains a batch's messages; no message at all is an empty answer.
// The client library ends a batch cut short by ctx without an error, so a
// batch that ends after ctx did is no answer: never a partial view.
func collect(ctx context.Context) func(iter.Seq2[*jetstream.RawStreamMsg, error], error) ([]*jetstream.RawStreamMsg, error) {
	return func(seq iter.Seq2[*jetstream.RawStreamMsg, error], err error) ([]*jetstream.RawStreamMsg, error) {
		return drain(ctx, seq, err)
	}
}

func drain(ctx context.Context, seq iter.Seq2[*jetstream.RawStreamMsg, error], err error) ([]*jetstream.RawStreamMsg, error) {
	if err != nil {
		return nil, err
	}
	var out []*jetstream.RawStreamMsg
	for m, err := range seq {
		if errors.Is(err, jetstreamext.ErrNoMessages) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// batchUnavailable: an older server, a stream without AllowDirect (no
// responder), or more matches than one answer may hold (the server's "413
// Too Many Results", which the client library reports as unsupported).
func batchUnavailable(err error) bool {
	return errors.Is(err, jetstreamext.ErrBatchUnsupported) || errors.Is(err, jetstreamext.ErrInvalidResponse) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders)
}

func lastMsgsOneByOne(ctx context.Context, js jetstream.JetStream, stream string, subjects []string) ([]*jetstream.RawStreamMsg, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", stream, err)
	}
	seen := map[string]bool{}
	var names []string
	for _, filter := range subjects {
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
		if err != nil {
			return nil, fmt.Errorf("subjects of %s matching %s: %w", stream, filter, err)
		}
		for s := range info.State.Subjects {
			if !seen[s] {
				seen[s] = true
				names = append(names, s)
			}
		}
	}
	sort.Strings(names)
	out := make([]*jetstream.RawStreamMsg, 0, len(names))
	for _, s := range names {
		m, err := st.GetLastMsgForSubject(ctx, s)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("last message on %s: %w", s, err)
		}
		out = append(out, m)
	}
	return out, nil
}
