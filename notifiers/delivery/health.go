package delivery

import (
	"context"
	"sync"
	"time"
)

// A channel keeps one view of its service's health, in memory (a restart
// starts healthy). While the service fails, its queued notifications do not
// each retry on their own schedule: one probe at a time, on the channel's
// backoff (retry_initial doubling up to retry_max, starting again when a
// new notification arrives), asks the service — a
// cheap check where the channel type has one (channel.Prober), then the
// queued notification tried longest ago. The first delivery that succeeds,
// probe or not, makes the channel healthy again and every queued incident
// is due at once. A notification that reaches the outbox after the failure
// was noticed is news to it and is tried at once whatever the health, in
// slots of its own, so a hung service's retries never hold a new page back.

const (
	// maxRetrySends bounds how many notifications a channel sends at once
	// that it has tried before or that waited out a failure: the probe, the
	// backlog after a recovery, last attempts before the dead-letter stream.
	maxRetrySends = 4
	// maxFirstSends bounds how many first attempts a channel has in flight:
	// a new page waits for a slot only while this many newer notifications
	// than the failure hang, and then at most send_timeout.
	maxFirstSends = 8
)

type health struct {
	initial, max time.Duration

	mu      sync.Mutex
	failing bool
	// since is when the channel last began failing: what was queued before
	// it waits for the probe and then drains in the retry slots; what came
	// after is news, tried once at once.
	since time.Time
	// probes counts failed probes since then: the exponent of the wait.
	probes    uint64
	nextProbe time.Time
	probing   bool
	// probeStarted is when the probe in flight began; arrivedAt is when a
	// notification last arrived while the channel failed.
	probeStarted, arrivedAt time.Time
	// lastOK is when the service last accepted a notification; a failure
	// of an attempt that began before it is old news.
	lastOK time.Time
	// changed is closed, and replaced, whenever the above changes in a way
	// a waiting incident or the prober cares about.
	changed chan struct{}

	first, retry chan struct{} // send slots
}

func newHealth(initial, max time.Duration) *health {
	return &health{
		initial: initial, max: max, changed: make(chan struct{}),
		first: make(chan struct{}, maxFirstSends), retry: make(chan struct{}, maxRetrySends),
	}
}

// healthState is a snapshot for deciding when a queued message is due.
type healthState struct {
	failing bool
	since   time.Time
	lastOK  time.Time
	changed <-chan struct{}
}

func (h *health) state() healthState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return healthState{failing: h.failing, since: h.since, lastOK: h.lastOK, changed: h.changed}
}

// broadcast wakes everything waiting on a change; h.mu is held.
func (h *health) broadcast() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// succeeded records that the service accepted a notification. It reports
// whether that ends a failure, and how long the failure lasted.
func (h *health) succeeded() (recovered bool, failedFor time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.lastOK = now
	if !h.failing {
		return false, 0
	}
	h.failing, h.probes = false, 0
	h.broadcast()
	return true, now.Sub(h.since)
}

// failed records a failed attempt that began at started. It reports
// whether the channel began failing with it; an attempt that began before
// the last success (a send that hung while others went through) does not
// make a healthy channel fail.
func (h *health) failed(started time.Time) (began bool, probeIn time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failing || h.lastOK.After(started) {
		return false, 0
	}
	now := time.Now()
	h.failing, h.since, h.probes = true, now, 0
	h.nextProbe = now.Add(backoff(1, h.initial, h.max))
	h.broadcast()
	return true, h.nextProbe.Sub(now)
}

// arrived records that a notification reached the outbox for the first
// time. While the channel fails, its backoff starts again from
// retry_initial: there is news for the person, so the service is asked as
// often as that notification alone would have been retried — still by one
// probe at a time, never by every queued one.
func (h *health) arrived() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing {
		return
	}
	now := time.Now()
	h.probes, h.arrivedAt = 0, now
	// While a probe is in flight nextProbe is spent: this replaces it.
	if next := now.Add(backoff(1, h.initial, h.max)); h.probing || next.Before(h.nextProbe) {
		h.nextProbe = next
		h.broadcast()
	}
}

// untilProbe says whether a probe is wanted (the channel fails and none is
// in flight) and how long until it is due; changed fires when that changes.
func (h *health) untilProbe() (wanted bool, wait time.Duration, changed <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failing && !h.probing, time.Until(h.nextProbe), h.changed
}

// startProbe claims the one probe; false when none is due.
func (h *health) startProbe() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing || h.probing || time.Now().Before(h.nextProbe) {
		return false
	}
	h.probing, h.probeStarted = true, time.Now()
	return true
}

// endProbe ends the claim. A probe that asked the service and failed
// doubles the wait for the next one, unless a notification arrived while
// it was in flight (arrived set the next one); one that asked nothing (its
// message needed no send after all) lets the next start at once.
func (h *health) endProbe(asked, ok bool) (nextIn time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probing = false
	if asked && !ok && h.failing {
		h.probes++
		if !h.arrivedAt.After(h.probeStarted) {
			h.nextProbe = time.Now().Add(backoff(h.probes+1, h.initial, h.max))
		}
	}
	h.broadcast()
	return time.Until(h.nextProbe)
}

// slot waits for a send slot: first attempts and the rest have their own,
// so neither can use up the other's. release gives it back.
func (h *health) slot(ctx context.Context, first bool) (release func(), err error) {
	s := h.retry
	if first {
		s = h.first
	}
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// due says how long q, the head of its incident, must still wait at now,
// and whether it would be a first attempt. A message not due waits also
// for a change of the channel's health (st.changed) and for its line's wake.
func (q *queued) due(now time.Time, st healthState) (wait time.Duration, first bool) {
	switch {
	case now.Before(q.holdUntil):
		return q.holdUntil.Sub(now), false
	case q.probe:
		return 0, false
	case q.failed == 0 && !q.arrived.Before(st.since):
		// News to the last failure (or there was none): tried at once
		// whatever the health, in the first-attempt slots.
		return 0, true
	case !now.Before(q.deadline):
		return 0, false // retry_for is up: a last attempt, then the dead-letter stream
	case st.failing:
		return q.deadline.Sub(now), false // the probe or a recovery wakes it
	case q.failed == 0 || q.lastFailure.Before(st.lastOK):
		return 0, false // the service answered since: the backlog drains
	}
	// Failed while others went through (a hung send, a message the service
	// refuses for its own sake): its own backoff.
	return min(q.retryAt.Sub(now), q.deadline.Sub(now)), false
}

// probe runs the channel's probes while it fails, one at a time on its
// backoff: the sender's cheap check where it has one, then the queued
// notification tried longest ago, which its incident's goroutine sends.
func (ls *lines) probe(ctx context.Context) {
	h := ls.w.health
	for ctx.Err() == nil {
		wanted, wait, changed := h.untilProbe()
		if !wanted || wait > 0 {
			if !wanted {
				wait = time.Hour // until changed
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
			case <-changed:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		if !ls.anyCandidate() {
			// Nothing waits for a probe now: the next failure or message
			// wakes this, a hold running out is seen within retry_initial.
			t := time.NewTimer(h.initial)
			select {
			case <-ctx.Done():
			case <-changed:
			case <-ls.probeWake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		if !h.startProbe() {
			continue
		}
		if err := ls.check(ctx); err != nil {
			next := h.endProbe(true, false)
			ls.w.log.Warn("channel still failing: its check did not pass", "err", err, "fix", ls.w.ch.Fix(err),
				"next_probe_in", next.Round(time.Millisecond))
			continue
		}
		if !ls.handProbe() {
			h.endProbe(false, false)
		}
	}
}

// check runs the sender's cheap service check, when it has one.
func (ls *lines) check(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, ls.w.timeout)
	defer cancel()
	_, err := ls.w.ch.Probe(cctx)
	return err
}
