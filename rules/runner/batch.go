package runner

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// A batch of facts is saved once and then acknowledged: each host's state
// is written at most once per batch instead of once per fact. A batch
// closes when it holds batchMax facts (one pull from the consumer) or is
// saveEvery old, whichever comes first. Pages do not wait for it: once a
// fact makes one due, the batch closes as soon as no further fact waits
// to be applied, or before that host's next fact (dueNow). A burst of pages (a thousand hosts of a fleet
// degrading at once) is then saved and published together, not with three
// round trips to the cluster for each of its facts in turn.
const (
	batchMax  = 64
	saveEvery = 100 * time.Millisecond
)

// heldFact is a fact applied and not yet acknowledged.
type heldFact struct {
	m   jetstream.Msg
	sum uint64 // its hash, for runner.seen once it is acked
}

// hold adds an applied fact to the open batch.
func (r *runner) hold(m jetstream.Msg, sum uint64) {
	r.batch = append(r.batch, heldFact{m: m, sum: sum})
}

// holds reports whether a fact with hash sum waits in the open batch.
func (r *runner) holds(sum uint64) bool {
	for _, f := range r.batch {
		if f.sum == sum {
			return true
		}
	}
	return false
}

// markDue notes whether the fact just applied for host made one of its
// notifications due.
func (r *runner) markDue(host string) {
	if !r.e.DueFor(host, r.now()) {
		return
	}
	if r.dueHosts == nil {
		r.dueHosts = map[string]struct{}{}
	}
	r.dueHosts[bus.Token(host)] = struct{}{}
}

// sendDueBefore sends what is due before a fact on subject is applied,
// when it is a fact of a host with a page due: each page is judged on the
// facts up to the one that made it due, as when each fact was handled on
// its own. A disk that drops out and is back in the host's next fact still
// pages (and resolves), instead of vanishing within one batch.
func (r *runner) sendDueBefore(ctx context.Context, subject string) {
	if len(r.dueHosts) == 0 {
		return
	}
	if host, ok := bus.HostOf(subject); ok {
		if _, due := r.dueHosts[host]; due {
			r.dueNow(ctx)
		}
	}
}

// dueNow sends what the open batch's facts made due: the first page of a
// quiet group should not wait up to a second for the ticker (a pulled
// disk should reach the phone now). Groups of other hosts falling due with
// time are the ticker's. The batch is committed first, as when each fact
// was saved on its own: a conflict with another engine gives the facts
// back before their pages go out, and a crash after the save leaves the
// pages due in the saved state.
func (r *runner) dueNow(ctx context.Context) {
	clear(r.dueHosts)
	if r.commit(ctx) {
		return
	}
	r.tick(ctx, r.now())
}

// commit saves the changed state and then acknowledges the open batch, as
// handling each fact on its own did: a crash between the save and the acks
// makes the bus deliver the batch again, and ObserveSeq ignores each fact
// already applied. When another engine changed the state first, the state
// is read again and the whole batch is given back to be applied again;
// commit then reports true.
func (r *runner) commit(ctx context.Context) (conflict bool) {
	conflict = r.save(ctx)
	if conflict {
		r.log.Warn("rules: state changed by another engine; reloading", "returned", len(r.batch))
		r.reload(ctx)
	}
	for _, f := range r.batch {
		if conflict {
			_ = f.m.NakWithDelay(time.Second)
			continue
		}
		r.seen.Add(f.sum)
		if err := f.m.Ack(); err != nil {
			r.log.Warn("rules: ack failed", "subject", f.m.Subject(), "err", err)
		}
		if md, err := f.m.Metadata(); err == nil && md.Sequence.Stream > r.lastSeq {
			r.lastSeq = md.Sequence.Stream
		}
	}
	clear(r.batch)
	r.batch = r.batch[:0]
	return conflict
}

// commitOnExit commits what is open when the consumer stops, so that a
// server stopped on purpose leaves nothing to deliver again.
//
// State applied but not saved (a save that failed, or was cut off by the
// stop) is tried once more at once, whatever the retry timer says: the
// engine that takes the partition over reads the state from the bucket.
func (r *runner) commitOnExit(ctx context.Context) {
	if len(r.batch) == 0 && !r.e.Unsaved() && !r.e.Touched() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storageTimeout)
	defer cancel()
	r.stateDown = time.Time{}
	// The bookkeeping too: the engine taking over reads it from the bucket.
	r.flushTouched = true
	r.commit(cctx)
	r.flushTouched = false
}
