package notifiers

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/bus"
)

// One channel delivers each incident's notifications in the order the rule
// engine published them, and incidents independently of each other. An
// incident is a notification group (Notification.GroupKey): its firing page,
// later news, and its resolved notice. A notification that fails stays at the
// head of its incident and is retried there, so nothing of that incident
// overtakes it; other incidents do not wait for it.

// maxScan bounds how many outbox messages a channel reads at start-up to
// learn which incidents a previous run left unacknowledged.
const maxScan = 2000

// lines holds one channel's undelivered notifications, one line per incident.
type lines struct {
	w     *worker
	mu    sync.Mutex
	byKey map[string]*line
	// expect lists, per incident, outbox sequences a previous run received
	// and did not acknowledge: the bus redelivers them after AckWait, and
	// until then (or until they arrive) later notifications of the incident
	// wait, so they do not overtake them.
	expect map[string][]expected
	wg     sync.WaitGroup
}

type line struct {
	key  string
	q    []*queued // by outbox sequence
	wake chan struct{}
}

type queued struct {
	msg jetstream.Msg
	seq uint64
	// retryAt is when a failed delivery is tried again.
	retryAt time.Time
	// failed counts this run's failed attempts.
	failed uint64
}

type expected struct {
	seq   uint64
	until time.Time
}

func newLines(w *worker) *lines {
	return &lines{w: w, byKey: map[string]*line{}, expect: map[string][]expected{}}
}

// incidentOf names the incident a notification belongs to: its host and
// group. Notifications without a group (tests, dead-letter reports) are
// each their own incident.
func incidentOf(n alert.Notification) string {
	if n.GroupKey == "" {
		return "id\x00" + n.ID
	}
	return n.Host + "\x00" + n.GroupKey
}

// dispatch queues msg behind the earlier notifications of its incident. A
// message it cannot place is handled at once (handle drops it).
func (ls *lines) dispatch(ctx context.Context, msg jetstream.Msg) {
	meta, err := msg.Metadata()
	var n alert.Notification
	if err == nil {
		_, err = bus.Decode(msg.Data(), "notification", &n)
	}
	if err != nil {
		ls.w.handle(ctx, msg, 0)
		return
	}
	key, seq := incidentOf(n), meta.Sequence.Stream
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.expect[key] = slices.DeleteFunc(ls.expect[key], func(e expected) bool { return e.seq == seq })
	if len(ls.expect[key]) == 0 {
		delete(ls.expect, key)
	}
	l := ls.byKey[key]
	if l == nil {
		l = &line{key: key, wake: make(chan struct{}, 1)}
		ls.byKey[key] = l
		ls.wg.Go(func() { ls.run(ctx, l) })
	}
	i, found := slices.BinarySearchFunc(l.q, seq, func(q *queued, s uint64) int { return cmpSeq(q.seq, s) })
	if found {
		// Redelivered while still queued: the newer delivery is the one
		// the bus now waits on (an attempt under way keeps the old one).
		l.q[i].msg = msg
		return
	}
	l.q = slices.Insert(l.q, i, &queued{msg: msg, seq: seq})
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// run delivers one incident's notifications in order until none is left.
func (ls *lines) run(ctx context.Context, l *line) {
	for {
		ls.mu.Lock()
		if len(l.q) == 0 {
			delete(ls.byKey, l.key)
			ls.mu.Unlock()
			return
		}
		head := l.q[0]
		wait := time.Until(head.retryAt)
		if w := ls.waitForEarlier(l.key, head.seq); w > wait {
			wait = w
		}
		msg := head.msg
		ls.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-l.wake: // something earlier may have arrived
			case <-t.C:
			}
			t.Stop()
			continue
		}
		retry := ls.w.handle(ctx, msg, head.failed)
		ls.mu.Lock()
		if retry > 0 {
			head.failed++
			head.retryAt = time.Now().Add(retry)
		} else {
			l.q = slices.DeleteFunc(l.q, func(q *queued) bool { return q == head })
		}
		ls.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
	}
}

// waitForEarlier is how long the head at seq must still wait for an
// earlier notification of its incident that a previous run left
// unacknowledged; expectations past their time are forgotten (that message
// was acknowledged after all, or has expired from the outbox).
func (ls *lines) waitForEarlier(key string, seq uint64) time.Duration {
	now := time.Now()
	var wait time.Duration
	ls.expect[key] = slices.DeleteFunc(ls.expect[key], func(e expected) bool { return !now.Before(e.until) })
	for _, e := range ls.expect[key] {
		if e.seq < seq {
			wait = max(wait, e.until.Sub(now))
		}
	}
	if len(ls.expect[key]) == 0 {
		delete(ls.expect, key)
	}
	return wait
}

// keepAlive tells the bus every queued message is still being worked on,
// so one waiting behind its incident's retries is not redelivered.
func (ls *lines) keepAlive(ctx context.Context) {
	t := time.NewTicker(max(ls.w.ackWait/3, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ls.mu.Lock()
		var msgs []jetstream.Msg
		for _, l := range ls.byKey {
			for _, q := range l.q {
				msgs = append(msgs, q.msg)
			}
		}
		ls.mu.Unlock()
		for _, m := range msgs {
			_ = m.InProgress()
		}
	}
}

// stop waits for the lines to end (ctx is done) and hands every message
// still queued back to the bus, oldest first, so the next run has them at
// once instead of after AckWait.
func (ls *lines) stop() {
	ls.wg.Wait()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var all []*queued
	for _, l := range ls.byKey {
		all = append(all, l.q...)
	}
	slices.SortFunc(all, func(a, b *queued) int { return cmpSeq(a.seq, b.seq) })
	for _, q := range all {
		_ = q.msg.Nak()
	}
	clear(ls.byKey)
}

// learnPending reads which outbox messages the channel's consumer has
// delivered and not seen acknowledged — by a run that has just died — so
// that their incidents' later notifications wait for them (see expect).
func (ls *lines) learnPending(ctx context.Context, cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil || info.NumAckPending == 0 {
		return
	}
	stream, err := ls.w.b.JS.Stream(ctx, bus.StreamAlerts)
	if err != nil {
		ls.w.log.Warn("cannot read the outbox to keep incidents in order after a restart", "err", err)
		return
	}
	until := time.Now().Add(ls.w.ackWait + 5*time.Second)
	first, last := info.AckFloor.Stream+1, info.Delivered.Stream
	if last >= first+maxScan {
		last = first + maxScan - 1
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for seq := first; seq <= last && ctx.Err() == nil; seq++ {
		raw, err := stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			ls.w.log.Warn("cannot read the outbox to keep incidents in order after a restart", "seq", seq, "err", err)
			return
		}
		var n alert.Notification
		if _, err := bus.Decode(raw.Data, "notification", &n); err != nil {
			continue
		}
		key := incidentOf(n)
		ls.expect[key] = append(ls.expect[key], expected{seq: seq, until: until})
	}
	ls.w.log.Info("a previous run left notifications unacknowledged; their incidents wait for them",
		"unacknowledged", info.NumAckPending, "incidents", len(ls.expect), "at_most", time.Until(until).Round(time.Second))
}
