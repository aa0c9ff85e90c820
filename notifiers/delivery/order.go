package delivery

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
)

// One channel delivers each incident's notifications in the order the rule
// engine published them, and incidents independently of each other. An
// incident is a notification group (Notification.GroupKey): its firing page,
// later news, and its resolved notice. A notification that fails stays at the
// head of its incident and is tried again there, so nothing of that incident
// overtakes it; other incidents do not wait for it. When it is tried again
// is the channel's decision (health.go): at once after the service has
// accepted anything since, else when a probe picks it.

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
	// watching: forgetAcknowledged runs.
	watching bool
	// probeWake tells the prober a message may have begun to wait.
	probeWake chan struct{}
	wg        sync.WaitGroup
	// clock reads quiet hours (quiet.go); nil: time.Now. Tests move it.
	clock func() time.Time
}

type line struct {
	key  string
	q    []*queued // by outbox sequence
	wake chan struct{}
}

type queued struct {
	msg jetstream.Msg
	seq uint64
	// arrived is when this run received it (this machine's clock, as the
	// channel's health is: the bus's timestamps may come from another
	// machine's); deadline is the outbox's timestamp plus retry_for.
	arrived, deadline time.Time
	// failed counts this run's failed attempts; lastTried and lastFailure
	// are the last's times, and retryAt its own backoff after it.
	failed                          uint64
	lastTried, lastFailure, retryAt time.Time
	// holdUntil: not to be tried before (the direct sender has it, the
	// dead-letter stream did not take it).
	holdUntil time.Time
	// probe: the prober chose it; inFlight: its attempt is under way.
	probe, inFlight bool
	// urgent: quiet hours never hold it back; quietUntil: they hold it
	// until then (quiet.go).
	urgent     bool
	quietUntil time.Time
}

type expected struct {
	seq   uint64
	until time.Time
}

func newLines(w *worker) *lines {
	return &lines{w: w, byKey: map[string]*line{}, expect: map[string][]expected{}, probeWake: make(chan struct{}, 1)}
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
		_ = ls.w.handle(ctx, msg, 0) // drops it
		return
	}
	key, seq := incidentOf(n), meta.Sequence.Stream
	if _, sends := ls.w.ch.Select(n); sends && meta.NumDelivered == 1 {
		ls.w.health.arrived()
	}
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
	q := &queued{msg: msg, seq: seq, arrived: time.Now(), deadline: meta.Timestamp.Add(ls.w.retryFor), urgent: urgent(n)}
	if i == 0 && len(l.q) > 0 && l.q[0].probe && !l.q[0].inFlight {
		// An earlier notification of the incident goes first: it carries
		// the channel's probe, which would otherwise wait behind it.
		q.probe, l.q[0].probe = true, false
	}
	l.q = slices.Insert(l.q, i, q)
	poke(l.wake)
	poke(ls.probeWake)
}

// poke wakes whoever waits on c, if nobody has already.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
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
	h := ls.w.health
	for ctx.Err() == nil {
		st := h.state()
		ls.mu.Lock()
		if len(l.q) == 0 {
			delete(ls.byKey, l.key)
			ls.mu.Unlock()
			return
		}
		wait, first := ls.waitForEarlier(l.key, l.q[0].seq), false
		var superseded []*queued
		if wait <= 0 {
			wait, superseded = ls.quietHold(l)
		}
		head := l.q[0]
		if wait <= 0 {
			wait, first = head.due(time.Now(), st)
		}
		ls.mu.Unlock()
		ls.dropSuperseded(ctx, superseded)
		if wait > 0 {
			ls.sleep(ctx, l, wait, st.changed)
			continue
		}
		release, err := h.slot(ctx, first)
		if err != nil {
			return
		}
		// The health or the line may have changed while it waited for a slot.
		st = h.state()
		ls.mu.Lock()
		if w, _ := head.due(time.Now(), st); l.q[0] != head || w > 0 {
			ls.mu.Unlock()
			release()
			continue
		}
		started := time.Now()
		head.inFlight, head.lastTried = true, started
		msg, failed := head.msg, head.failed
		ls.mu.Unlock()
		res := ls.w.handle(ctx, msg, failed)
		release()
		if res.ack != nil {
			res.ack() // before the incident's next notification, outside the slot
		}
		ls.settle(ctx, l, head, res, started)
	}
}

// settle records what became of the head's attempt, with the channel's
// health too.
func (ls *lines) settle(ctx context.Context, l *line, head *queued, res outcome, started time.Time) {
	h := ls.w.health
	if res.tried && ctx.Err() == nil {
		if res.err == nil {
			if recovered, took := h.succeeded(); recovered {
				ls.w.log.Info("channel answers again: its queued notifications go out now",
					"failed_for", took.Round(time.Millisecond), "queued", ls.count())
			}
		} else if began, probeIn := h.failed(started); began {
			ls.w.log.Warn("channel failing: its queued notifications wait for one probe instead of each retrying",
				"err", res.err, "fix", ls.w.ch.Fix(res.err), "probe_in", probeIn.Round(time.Millisecond))
		}
	}
	now := time.Now()
	ls.mu.Lock()
	wasProbe := head.probe
	head.probe, head.inFlight = false, false
	if res.tried && res.err != nil {
		head.failed++
		head.lastFailure = now
	}
	switch {
	case res.retryIn <= 0:
		l.q = slices.DeleteFunc(l.q, func(q *queued) bool { return q == head })
	case res.hold:
		head.holdUntil = now.Add(res.retryIn)
	default:
		head.retryAt = now.Add(res.retryIn)
	}
	ls.mu.Unlock()
	if wasProbe {
		next := h.endProbe(res.tried, res.err == nil)
		if res.tried && res.err != nil {
			ls.w.log.Warn("channel still failing: the probe was not accepted", "next_probe_in", next.Round(time.Millisecond))
		}
	}
	if res.err != nil {
		poke(ls.probeWake)
	}
}

// sleep waits up to d for something that may make the line's head due.
func (ls *lines) sleep(ctx context.Context, l *line, d time.Duration, changed <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-l.wake: // something earlier may have arrived, or the prober chose it
	case <-changed:
	case <-t.C:
	}
}

// count is how many notifications are queued.
func (ls *lines) count() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	n := 0
	for _, l := range ls.byKey {
		n += len(l.q)
	}
	return n
}

// candidate is the head of an incident that waits for the failing channel
// and was tried longest ago (never first, then the oldest); ls.mu is held.
func (ls *lines) candidate(now time.Time, st healthState) (*line, *queued) {
	var bl *line
	var best *queued
	for _, l := range ls.byKey {
		if len(l.q) == 0 || len(ls.expect[l.key]) > 0 {
			continue
		}
		q := l.q[0]
		if q.inFlight || q.probe || now.Before(q.holdUntil) || ls.quietNow().Before(q.quietUntil) {
			continue
		}
		if w, _ := q.due(now, st); w <= 0 {
			continue // goes by itself
		}
		if best == nil || q.lastTried.Before(best.lastTried) || (q.lastTried.Equal(best.lastTried) && q.seq < best.seq) {
			bl, best = l, q
		}
	}
	return bl, best
}

// anyCandidate reports whether a probe would have a notification to try.
func (ls *lines) anyCandidate() bool {
	st := ls.w.health.state()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	_, q := ls.candidate(time.Now(), st)
	return q != nil
}

// handProbe makes the candidate the probe and wakes its incident; false
// when there is none left.
func (ls *lines) handProbe() bool {
	st := ls.w.health.state()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l, q := ls.candidate(time.Now(), st)
	if q == nil {
		return false
	}
	q.probe = true
	poke(l.wake)
	return true
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
// The consumer tells only its ack floor and how many are pending, not
// which, so every message above the floor is expected; forgetAcknowledged
// lets go of them as the floor moves.
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
	if len(ls.expect) > 0 && !ls.watching {
		ls.watching = true
		ls.wg.Go(func() { ls.forgetAcknowledged(ctx, cons) })
	}
}

// expectPoll is how often the consumer's ack floor is read while
// incidents wait for notifications a previous run left.
const expectPoll = time.Second

// forgetAcknowledged reads the consumer's progress while incidents wait
// (see expect) and forgets what it shows acknowledged after all: every
// message up to the ack floor, or all once nothing is pending. Such a
// message does not come back: a fleet peer sharing the consumer had it in
// flight, or the dead run's acknowledgement arrived late. Without this an
// incident whose message was acknowledged, but lay above an older one still
// pending, waited the full AckWait for nothing.
func (ls *lines) forgetAcknowledged(ctx context.Context, cons jetstream.Consumer) {
	t := time.NewTicker(expectPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return // stop() ends the lines; nothing waits any more
		case <-t.C:
		}
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := cons.Info(ictx)
		cancel()
		now := time.Now()
		ls.mu.Lock()
		for key, es := range ls.expect {
			n := len(es)
			es = slices.DeleteFunc(es, func(e expected) bool {
				return !now.Before(e.until) || err == nil && (e.seq <= info.AckFloor.Stream || info.NumAckPending == 0)
			})
			if len(es) == n {
				continue
			}
			if len(es) == 0 {
				delete(ls.expect, key)
			} else {
				ls.expect[key] = es
			}
			if l := ls.byKey[key]; l != nil {
				poke(l.wake)
			}
		}
		done := len(ls.expect) == 0
		ls.watching = !done
		ls.mu.Unlock()
		if done {
			return
		}
	}
}
