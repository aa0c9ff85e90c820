package delivery

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
)

// Sender is what the rule engine calls to send its notifications. Each
// engine has its own (Path.Sender); it is used from the engine's goroutine.
type Sender interface {
	// Put queues n behind the notifications put before it. taken, when
	// not nil, runs (within Flush, with its context) once the outbox has
	// taken n: a silence's expiry notice is then recorded as sent.
	Put(n alert.Notification, taken func(ctx context.Context))
	// Flush publishes what is queued to the outbox, in order. What the
	// outbox does not take is delivered directly once, and stays queued
	// until the outbox takes it (its channels then skip it).
	Flush(ctx context.Context)
	// Waiting is how many notifications the outbox has not taken yet:
	// while any waits the engine saves no state, so that after a crash
	// they are still due in what was saved.
	Waiting() int
	// Durable reports whether the storage keeps what is published now;
	// while it does not, the engine also reads facts as they are published.
	Durable() bool
	// Answer publishes a health canary's answer (CanaryPrefix+id) for host
	// at once, outside the queue; nothing, while the outbox refuses writes.
	Answer(ctx context.Context, host, id string)
	// Report hears of each write of the engine's own state ("state"): the
	// error, or nil after a success.
	Report(part string, err error)
}

// Path is the degraded-mode half of delivery that the rule engines of one
// process share; every field is optional, and a nil *Path is the outbox
// alone. The daemon's comes from Service.Path.
type Path struct {
	// Direct delivers a notification straight to the channels, for when
	// the outbox does not take it.
	Direct func(ctx context.Context, n alert.Notification) error
	// Storage hears of each write to the outbox ("outbox") or the rule
	// state ("state"): the error, or nil after a success.
	Storage func(part string, err error)
	// Degraded says the state storage is failing.
	Degraded func() bool
	// RepairConsumer removes a consumer the server cannot open (its files
	// are damaged), so that its owner creates it again.
	RepairConsumer func(ctx context.Context, stream, consumer string) error
	// Repaired hears of damaged state that was found and rewritten, with
	// what may have been lost, to be paged (StateStorageFailed).
	Repaired func(what string)
}

// WatchesStorage reports whether p can say the storage is failing: only
// then need the engine read facts as they are published.
func (p *Path) WatchesStorage() bool { return p != nil && p.Degraded != nil }

// Repair removes a damaged consumer through RepairConsumer; false when p
// has none.
func (p *Path) Repair(ctx context.Context, stream, consumer string) (can bool, err error) {
	if p == nil || p.RepairConsumer == nil {
		return false, nil
	}
	return true, p.RepairConsumer(ctx, stream, consumer)
}

// Damaged records damaged state found and rewritten, through Repaired.
func (p *Path) Damaged(what string) {
	if p != nil && p.Repaired != nil {
		p.Repaired(what)
	}
}

// Sender returns a new queue for one rule engine, which logs to log.
func (p *Path) Sender(b *bus.Bus, log *slog.Logger) *Queue {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	q := &Queue{b: b, log: log, now: time.Now}
	if p != nil {
		q.path = *p
	}
	return q
}

// While the outbox refuses writes it is tried again this often (not at
// every flush), each try bounded by publishTimeout.
const (
	retryOutboxEvery = 5 * time.Second
	publishTimeout   = 3 * time.Second
)

// maxPending bounds what waits for the outbox; the oldest are dropped.
const maxPending = 1000

// Queue is one rule engine's Sender.
type Queue struct {
	b    *bus.Bus
	path Path
	log  *slog.Logger
	now  func() time.Time // the wall clock: the outbox is retried on it
	// pending are notifications due but not yet in the outbox, oldest first.
	pending []pendingNote
	// outboxDown: when a write last failed; zero while it works.
	outboxDown time.Time
	// recent were published in the last recentFor; wasDegraded is whether
	// the storage was failing at the last flush.
	recent      []sentNote
	wasDegraded bool
}

var _ Sender = (*Queue)(nil)

type sentNote struct {
	n  alert.Notification
	at time.Time
}

type pendingNote struct {
	n      alert.Notification
	direct bool // handed to Path.Direct already
	taken  func(ctx context.Context)
}

// Put implements Sender.
func (q *Queue) Put(n alert.Notification, taken func(ctx context.Context)) {
	q.pending = append(q.pending, pendingNote{n: n, taken: taken})
}

// Waiting implements Sender.
func (q *Queue) Waiting() int { return len(q.pending) }

// Durable implements Sender.
func (q *Queue) Durable() bool { return q.path.Degraded == nil || !q.path.Degraded() }

// Report implements Sender.
func (q *Queue) Report(part string, err error) {
	if q.path.Storage != nil {
		q.path.Storage(part, err)
	}
}

// Answer implements Sender.
func (q *Queue) Answer(ctx context.Context, host, id string) {
	if !q.outboxDown.IsZero() && q.now().Sub(q.outboxDown) < retryOutboxEvery {
		return // it would not arrive: the health check fails as it should
	}
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	err := publish(pctx, q.b, alert.Notification{ID: CanaryPrefix + id, Host: host, Status: alert.Firing, Created: time.Now()})
	q.Report("outbox", err)
}

// Flush implements Sender. Notifications of different hosts are published
// together (publishWindow): a burst of a thousand hosts' pages is not a
// thousand round trips to the cluster one after the other.
func (q *Queue) Flush(ctx context.Context) {
	if len(q.pending) > maxPending {
		drop := len(q.pending) - maxPending
		q.log.Error("rules: the outbox has not taken notifications for long; dropping the oldest", "dropped", drop)
		q.pending = q.pending[drop:]
	}
	now := q.now()
	degraded := !q.Durable()
	if degraded && !q.wasDegraded {
		// What the outbox took just before the failure showed may be stuck
		// in it: send it directly too (channels that had it are skipped).
		for _, s := range q.recent {
			if now.Sub(s.at) <= recentFor {
				q.sendDirect(ctx, s.n, 0)
			}
		}
	}
	q.wasDegraded = degraded
	for len(q.pending) > 0 {
		if !q.outboxDown.IsZero() && now.Sub(q.outboxDown) < retryOutboxEvery {
			break
		}
		window := q.pending[:publishWindow(q.pending)]
		ns := make([]alert.Notification, len(window))
		for i, p := range window {
			ns[i] = p.n
		}
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		errs := publishAll(pctx, q.b, ns)
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
				q.sendDirect(ctx, p.n, takenGrace)
			}
			if p.taken != nil {
				p.taken(ctx)
			}
			q.remember(p.n, now)
			q.log.Info("notification", "id", p.n.ID, "host", p.n.Host, "status", p.n.Status, "alerts", len(p.n.Alerts), "severity", p.n.MaxSeverity())
		}
		q.pending = append(kept, q.pending[len(window):]...)
		if failed != nil && ctx.Err() != nil {
			// Cut off by the engine's stop (a shutdown, a partition handed
			// over), not refused by the outbox: no storage failure to
			// report, and no direct delivery with a context that ended.
			break
		}
		q.Report("outbox", failed)
		if failed != nil {
			if q.outboxDown.IsZero() {
				q.log.Error("rules: the outbox does not take notifications; delivering directly and retrying", "id", kept[0].n.ID, "err", failed)
			}
			q.outboxDown = now
			break
		}
		if !q.outboxDown.IsZero() {
			q.log.Info("rules: the outbox takes notifications again", "pending", len(q.pending))
		}
		q.outboxDown = time.Time{}
	}
	for i := range q.pending {
		if p := &q.pending[i]; !p.direct {
			p.direct = true
			q.sendDirect(ctx, p.n, 0)
		}
	}
}

// takenGrace is how long a notification the outbox took while the storage
// fails waits before it is also sent directly.
const takenGrace = 3 * time.Second

// sendDirect hands n to Path.Direct after delay, in the background: a hung
// channel must not stop the engine.
func (q *Queue) sendDirect(ctx context.Context, n alert.Notification, delay time.Duration) {
	if q.path.Direct == nil {
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
		if err := q.path.Direct(ctx, n); err != nil {
			q.log.Error("rules: direct delivery failed", "id", n.ID, "err", err)
		}
	}()
}

// recentFor is how long a published notification is remembered, to be
// sent directly too if the storage turns out to be failing.
const recentFor = time.Minute

func (q *Queue) remember(n alert.Notification, now time.Time) {
	keep := q.recent[:0]
	for _, s := range q.recent {
		if now.Sub(s.at) <= recentFor {
			keep = append(keep, s)
		}
	}
	q.recent = append(keep, sentNote{n: n, at: now})
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

// wrapNotification wraps n as the rule engine publishes it (origin "rules").
func wrapNotification(n alert.Notification) ([]byte, error) {
	if n.Timing != nil {
		// The outbox leg of the latency budget: when it was handed over.
		t := *n.Timing
		t.Outbox = time.Now().UTC()
		n.Timing = &t
	}
	return bus.WrapSchema(bus.SchemaNotification, n.Host, "rules", n.Created, n)
}
