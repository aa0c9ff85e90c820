package delivery

import (
	"context"
	"slices"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Quiet hours (a channel's quiet: from/to). During them a channel sends
// only what is urgent: a critical incident's notices (its resolved notice
// too) and test messages. The rest waits in the outbox, unacknowledged, so
// a restart or a crash loses none of it, and goes out when the quiet time
// ends, every incident's at once.
//
// Each notification carries its whole incident (every alert of the group,
// firing or resolved, with its times), so while an incident waits only its
// newest one matters: the older ones it supersedes are acknowledged
// unsent. A warning that fired and ended in the night therefore arrives
// in the morning as one resolved notice that says when it began and how
// long it lasted; a warning that turns critical pages at once, with all
// of the incident in that page.
//
// Direct delivery (direct.go), which runs only while the outbox cannot
// store, sends at once: without the outbox nothing could wait safely.

// urgent tells the notifications quiet hours never hold back.
func urgent(n alert.Notification) bool {
	return n.Test || n.MaxSeverity() == alert.Critical
}

// quietNow is the clock quiet hours are read on: the box's, in its zone.
func (ls *lines) quietNow() time.Time {
	if ls.clock != nil {
		return ls.clock()
	}
	return time.Now()
}

// quietHold decides whether l waits for the end of the channel's quiet
// time, and until when; ls.mu is held. In quiet time the notifications the
// newest one supersedes are taken off the line, for the caller to
// acknowledge (unsent) once it has let go of ls.mu.
func (ls *lines) quietHold(l *line) (wait time.Duration, superseded []*queued) {
	now := ls.quietNow()
	end, quiet := ls.w.ch.Quiet.End(now)
	if !quiet || len(l.q) == 0 {
		return 0, nil
	}
	newest := l.q[len(l.q)-1]
	for _, q := range l.q[:len(l.q)-1] {
		if !q.inFlight && !q.probe {
			superseded = append(superseded, q)
		}
	}
	l.q = slices.DeleteFunc(l.q, func(q *queued) bool { return slices.Contains(superseded, q) })
	if newest.urgent {
		return 0, superseded
	}
	if newest.quietUntil.IsZero() {
		ls.w.log.Info("notification waits for the channel's quiet hours to end", "seq", newest.seq, "until", end.Format("2006-01-02 15:04 MST"))
	}
	newest.quietUntil = end
	return min(end.Sub(now), ls.quietRecheck()), superseded
}

// quietRecheck: a held incident looks at the clock again at least this
// often, so a wall clock that jumps (NTP stepping it, a box resumed from
// suspend) ends the quiet time when it says. A test's clock moves at its
// will: looked at often.
func (ls *lines) quietRecheck() time.Duration {
	if ls.clock != nil {
		return 20 * time.Millisecond
	}
	return time.Minute
}

// dropSuperseded acknowledges notifications that a newer one of their
// incident replaced during quiet hours.
func (ls *lines) dropSuperseded(ctx context.Context, qs []*queued) {
	for _, q := range qs {
		meta, err := q.msg.Metadata()
		if err != nil {
			continue
		}
		log := ls.w.log.With("seq", meta.Sequence.Stream)
		log.Debug("notification superseded during quiet hours by a newer one of its incident; not sent")
		ls.w.ack(ctx, q.msg, alert.Notification{}, log)
	}
}
