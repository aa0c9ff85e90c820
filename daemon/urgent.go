package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/zwatch/zwatch/collectors"
)

// maxUrgentPending bounds the targets waiting for one collector: a burst
// of kernel lines about many disks keeps the first ones, the rest wait for
// the collector's next round.
const maxUrgentPending = 16

// urgentQueue holds the targets other collectors asked one TargetCollector
// to read now (Env.Urgent), deduplicated, until its worker takes them.
type urgentQueue struct {
	name    string
	running atomic.Bool // a worker drains it; requests are dropped otherwise
	mu      sync.Mutex
	pending []string
	wake    chan struct{}
	dropped atomic.Uint64
}

func newUrgentQueue(name string) *urgentQueue {
	return &urgentQueue{name: name, wake: make(chan struct{}, 1)}
}

// ask queues target unless it is queued already, the queue is full or no
// collector of that name runs here. It never blocks: followers call it.
func (q *urgentQueue) ask(target string) {
	if target == "" || !q.running.Load() {
		return
	}
	q.mu.Lock()
	queued := false
	for _, p := range q.pending {
		queued = queued || p == target
	}
	full := len(q.pending) >= maxUrgentPending
	if !queued && !full {
		q.pending = append(q.pending, target)
	}
	q.mu.Unlock()
	if full && !queued {
		q.dropped.Add(1)
		return
	}
	poke(q.wake)
}

// take empties the queue.
func (q *urgentQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending = nil
	return out
}

// urgentQueues are the queues by collector name, made when a collector is
// built (the asking follower may be built before the one asked).
type urgentQueues map[string]*urgentQueue

func (u urgentQueues) queue(name string) *urgentQueue {
	if u[name] == nil {
		u[name] = newUrgentQueue(name)
	}
	return u[name]
}

// urgent is Env.Urgent.
func (u urgentQueues) urgent(name string) func(target string) {
	return u.queue(name).ask
}

// urgentComponent reads the queued targets of c one after the other, with
// the collector's own bounds (SMART: once per disk per few minutes).
func urgentComponent(q *urgentQueue, c collectors.TargetCollector, pub collectors.Publisher, log *slog.Logger) Component {
	q.running.Store(true)
	return Component{Name: c.Name() + "-urgent", Run: func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-q.wake:
			}
			if n := q.dropped.Swap(0); n > 0 {
				log.Warn("urgent requests dropped: queue full", "dropped", n)
			}
			for _, target := range q.take() {
				err := c.CollectTarget(ctx, pub, target)
				var skip *collectors.UrgentSkip
				switch {
				case err == nil:
					log.Debug("urgent read", "target", target)
				case ctx.Err() != nil:
					return nil
				case errors.As(err, &skip):
					log.Debug("urgent read skipped", "target", target, "why", skip.Why)
				default:
					log.Warn("urgent read failed", "target", target, "err", err)
				}
			}
		}
	}}
}
