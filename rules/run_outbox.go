package rules

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
)

// flush publishes what is pending, in order; what the outbox does not take
// is delivered directly once and stays pending until the outbox takes it
// (its channels then skip it: notifiers.DirectRecord). Notifications of
// different hosts are published together (publishWindow): a burst of a
// thousand hosts' pages is not a thousand round trips to the cluster one
// after the other.
func (r *runner) flush(ctx context.Context, now time.Time) {
	degraded := r.opts.Degraded != nil && r.opts.Degraded()
	if degraded && !r.wasDegraded {
		// What the outbox took just before the failure showed may be stuck
		// in it: send it directly too (channels that had it are skipped).
		for _, s := range r.recent {
			if now.Sub(s.at) <= recentFor {
				r.sendDirect(ctx, s.n, 0)
			}
		}
	}
	r.wasDegraded = degraded
	for len(r.pending) > 0 {
		if !r.outboxDown.IsZero() && now.Sub(r.outboxDown) < retryStorageEvery {
			break
		}
		window := r.pending[:publishWindow(r.pending)]
		ns := make([]alert.Notification, len(window))
		for i, p := range window {
			ns[i] = p.n
		}
		pctx, cancel := context.WithTimeout(ctx, storageTimeout)
		errs := publishAll(pctx, r.b, ns)
		cancel()
		var kept []pendingNote // not taken, in order
		var failed error
		for i, p := range window {
			if errs[i] != nil {
				kept = append(kept, p)
				failed = cmp.Or(failed, errs[i])
				continue
			}
			if degraded && !p.direct {
				// Taken, but the storage fails: it may never be delivered.
				// Give the channels' workers a moment first, so that what
				// they deliver is not sent twice.
				r.sendDirect(ctx, p.n, takenGrace)
			}
			if p.silence != "" {
				r.noticed(ctx, p.silence, r.now())
			}
			r.remember(p.n, now)
			r.log.Info("notification", "id", p.n.ID, "host", p.n.Host, "status", p.n.Status, "alerts", len(p.n.Alerts), "severity", p.n.MaxSeverity())
		}
		r.pending = append(kept, r.pending[len(window):]...)
		r.report("outbox", failed)
		if failed != nil {
			if r.outboxDown.IsZero() {
				r.log.Error("rules: the outbox does not take notifications; delivering directly and retrying", "id", kept[0].n.ID, "err", failed)
			}
			r.outboxDown = now
			break
		}
		if !r.outboxDown.IsZero() {
			r.log.Info("rules: the outbox takes notifications again", "pending", len(r.pending))
		}
		r.outboxDown = time.Time{}
	}
	for i := range r.pending {
		if p := &r.pending[i]; !p.direct {
			p.direct = true
			r.sendDirect(ctx, p.n, 0)
		}
	}
}

// takenGrace is how long a notification the outbox took while the storage
// fails waits before it is also sent directly.
const takenGrace = 3 * time.Second

// sendDirect hands n to opts.Direct after delay, in the background: a hung
// channel must not stop the engine.
func (r *runner) sendDirect(ctx context.Context, n alert.Notification, delay time.Duration) {
	if r.opts.Direct == nil {
		return
	}
	go func() {
		if delay > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
		}
		if err := r.opts.Direct(ctx, n); err != nil {
			r.log.Error("rules: direct delivery failed", "id", n.ID, "err", err)
		}
	}()
}

// recentFor is how long a published notification is remembered, to be
// sent directly too if the storage turns out to be failing.
const recentFor = time.Minute

func (r *runner) remember(n alert.Notification, now time.Time) {
	keep := r.recent[:0]
	for _, s := range r.recent {
		if now.Sub(s.at) <= recentFor {
			keep = append(keep, s)
		}
	}
	r.recent = append(keep, sentNote{n: n, at: now})
}

// publish puts a notification on zwatch.v1.<host>.alert.
func publish(ctx context.Context, b *bus.Bus, n alert.Notification) error {
	data, err := wrapNotification(n)
	if err != nil {
		return err
	}
	if _, err := b.JS.Publish(ctx, bus.Subject(n.Host, bus.KindAlert), data, jetstream.WithMsgID(n.ID)); err != nil {
		return fmt.Errorf("publish notification %s: %w", n.ID, err)
	}
	return nil
}

// maxPublishWindow bounds how many notifications are in flight at once.
const maxPublishWindow = 64

// publishWindow is how many of the pending notifications, from the first,
// may be published together: up to the first one of a host already in
// the window. One host's notifications stay one at a time, so that a
// failure never lets a later one of them into the outbox before it.
func publishWindow(pending []pendingNote) int {
	hosts := map[string]bool{}
	for i, p := range pending {
		if i == maxPublishWindow || hosts[p.n.Host] {
			return i
		}
		hosts[p.n.Host] = true
	}
	return len(pending)
}

// publishAll publishes ns without waiting for each one's acknowledgement
// before the next, and reports each one's error.
func publishAll(ctx context.Context, b *bus.Bus, ns []alert.Notification) []error {
	errs := make([]error, len(ns))
	if len(ns) == 1 {
		// A box's usual case: no asynchronous publish, whose first use
		// subscribes the connection to acknowledgements for good.
		errs[0] = publish(ctx, b, ns[0])
		return errs
	}
	acks := make([]jetstream.PubAckFuture, len(ns))
	for i, n := range ns {
		data, err := wrapNotification(n)
		if err == nil {
			acks[i], err = b.JS.PublishAsync(bus.Subject(n.Host, bus.KindAlert), data, jetstream.WithMsgID(n.ID))
		}
		if err != nil {
			errs[i] = fmt.Errorf("publish notification %s: %w", n.ID, err)
		}
	}
	for i, ack := range acks {
		if ack == nil {
			continue
		}
		select {
		case <-ack.Ok():
		case err := <-ack.Err():
			errs[i] = fmt.Errorf("publish notification %s: %w", ns[i].ID, err)
		case <-ctx.Done():
			errs[i] = fmt.Errorf("publish notification %s: %w", ns[i].ID, ctx.Err())
		}
	}
	return errs
}

func wrapNotification(n alert.Notification) ([]byte, error) {
	return bus.WrapSchema(bus.SchemaNotification, n.Host, "rules", n.Created, n)
}
