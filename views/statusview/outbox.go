package statusview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// Outbox reads each configured channel's delivery progress.
func (r *Reader) Outbox(ctx context.Context) ([]ChannelProgress, error) {
	dead, err := delivery.DeadLetters(ctx, r.b.JS)
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	return r.outbox(ctx, dead)
}

func (r *Reader) outbox(ctx context.Context, dead []delivery.DeadLetter) ([]ChannelProgress, error) {
	out := make([]ChannelProgress, 0, len(r.channels))
	var st jetstream.Stream
	if len(r.channels) > 0 {
		var err error
		if st, err = r.b.JS.Stream(ctx, bus.StreamAlerts); err != nil {
			return nil, fmt.Errorf("outbox stream %s: %w", bus.StreamAlerts, err)
		}
	}
	for _, c := range r.channels {
		p := ChannelProgress{Channel: c.name, Type: c.typ}
		for _, d := range dead {
			if d.Channel == c.name {
				p.DeadLetters++
			}
		}
		cons, err := st.Consumer(ctx, notifiers.ConsumerName(c.name))
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound):
			// Not started yet: everything in the outbox waits for it.
			p.Backlog = st.CachedInfo().State.Msgs
		case err != nil:
			return nil, fmt.Errorf("outbox consumer of channel %s: %w", c.name, err)
		default:
			info := cons.CachedInfo() // read by Consumer just now
			p.AckFloor = info.AckFloor.Stream
			p.Backlog = info.NumPending + uint64(info.NumAckPending)
		}
		out = append(out, p)
	}
	return out, nil
}

// RecentFromOutbox reads the last n notifications people were sent (canary
// messages left out), oldest first, with each one's outbox sequence.
func RecentFromOutbox(ctx context.Context, js jetstream.JetStream, n int) ([]alert.Notification, []uint64, error) {
	return (*RecentCache)(nil).Read(ctx, js, n)
}

// RecentCache remembers the last answer of RecentFromOutbox. A stored
// message never changes, so while the outbox's first and last sequences and
// its count stay where they were, the same notifications come back without
// reading and decoding them again: the alerts snapshot asks every 5 s, and
// decoding fifty notifications (about 100 KB of JSON) was three quarters of
// each rebuild (BenchmarkAlertsSnapshot). Not for concurrent use.
type RecentCache struct {
	key   recentKey
	notes []alert.Notification
	seqs  []uint64
}

type recentKey struct {
	first, last, msgs uint64
	n                 int
}

// Read is RecentFromOutbox through c (nil: no cache). The slices it returns
// may be returned again: callers must not modify them.
func (c *RecentCache) Read(ctx context.Context, js jetstream.JetStream, n int) ([]alert.Notification, []uint64, error) {
	st, err := js.Stream(ctx, bus.StreamAlerts)
	if err != nil {
		return nil, nil, err
	}
	info := st.CachedInfo() // read by Stream just now
	out, seqs := []alert.Notification{}, []uint64{}
	if info.State.Msgs == 0 {
		return out, seqs, nil
	}
	first, last := info.State.FirstSeq, info.State.LastSeq
	key := recentKey{first: first, last: last, msgs: info.State.Msgs, n: n}
	if c != nil && c.notes != nil && c.key == key {
		return c.notes, c.seqs, nil
	}
	if last >= uint64(n) && last-uint64(n)+1 > first {
		first = last - uint64(n) + 1
	}
	msgs, err := bus.MsgRange(ctx, js, bus.StreamAlerts, first, int(last-first+1))
	if err != nil {
		return nil, nil, err
	}
	for _, m := range msgs {
		var note alert.Notification
		if _, err := bus.Decode(m.Data, "notification", &note); err == nil && !strings.HasPrefix(note.ID, delivery.CanaryPrefix) {
			out = append(out, note)
			seqs = append(seqs, m.Sequence)
		}
	}
	if c != nil {
		c.key, c.notes, c.seqs = key, out, seqs
	}
	return out, seqs, nil
}

// withDelivery tells each notification's delivery state, newest first: a
// channel has taken a notification once its ack floor reaches it; one it
// gave up on is a dead letter.
func withDelivery(notes []alert.Notification, seqs []uint64, progress []ChannelProgress, dead []delivery.DeadLetter) []Notification {
	out := make([]Notification, 0, len(notes))
	for i := len(notes) - 1; i >= 0; i-- {
		n := Notification{Notification: notes[i], Seq: seqs[i], Delivery: Delivered}
		for _, d := range dead {
			if d.Notification.ID == n.ID && !slices.Contains(n.Dead, d.Channel) {
				n.Dead = append(n.Dead, d.Channel)
			}
		}
		for _, p := range progress {
			if p.AckFloor < n.Seq && !slices.Contains(n.Dead, p.Channel) {
				n.Pending = append(n.Pending, p.Channel)
			}
		}
		switch {
		case len(n.Dead) > 0:
			n.Delivery = Failed
		case len(n.Pending) > 0:
			n.Delivery = Queued
		}
		out = append(out, n)
	}
	return out
}
