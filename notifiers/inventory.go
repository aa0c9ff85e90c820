package notifiers

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zwatch/zwatch/internal/clock"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// InventoryFeed carries the daemon's latest inventory (every host's pools
// and disks) to the channel workers whose senders implement
// channel.InventoryReceiver. The daemon sets it; each such worker hands
// every change to its sender. Safe for concurrent use.
type InventoryFeed struct {
	mu      sync.Mutex
	inv     channel.Inventory
	version uint64
	changed chan struct{} // closed and replaced on every change
	readers atomic.Int32
}

// NewInventoryFeed returns a feed with no inventory yet.
func NewInventoryFeed() *InventoryFeed {
	return &InventoryFeed{changed: make(chan struct{})}
}

// Set publishes inv to the readers, unless it says what the last one said
// (when it was read aside).
func (f *InventoryFeed) Set(inv channel.Inventory) {
	f.mu.Lock()
	defer f.mu.Unlock()
	last, next := f.inv, inv
	last.At, next.At = time.Time{}, time.Time{}
	if f.version > 0 && reflect.DeepEqual(last, next) {
		return
	}
	f.inv = inv
	f.version++
	close(f.changed)
	f.changed = make(chan struct{})
}

// Wanted reports whether a channel reads the feed: reading the inventory
// off the bus is skipped while none does.
func (f *InventoryFeed) Wanted() bool { return f != nil && f.readers.Load() > 0 }

// next waits for an inventory newer than version after.
func (f *InventoryFeed) next(ctx context.Context, after uint64) (channel.Inventory, uint64, error) {
	for {
		f.mu.Lock()
		inv, v, changed := f.inv, f.version, f.changed
		f.mu.Unlock()
		if v > after {
			return inv, v, nil
		}
		select {
		case <-ctx.Done():
			return channel.Inventory{}, 0, ctx.Err()
		case <-changed:
		}
	}
}

// Feed hands every inventory of f to r, the sender of ch, until ctx ends;
// each hand-over runs under timeout, and a failure is tried again after
// retry(failures so far), capped at a minute: the sensors wait on this,
// not a page.
func (f *InventoryFeed) Feed(ctx context.Context, ch *Channel, r channel.InventoryReceiver, timeout time.Duration, retry func(failed uint64) time.Duration, log *slog.Logger) {
	f.readers.Add(1)
	defer f.readers.Add(-1)
	var seen uint64
	var failed uint64
	for {
		inv, v, err := f.next(ctx, seen)
		if err != nil {
			return
		}
		inv = ownInventory(ch, inv)
		sctx, cancel := context.WithTimeout(ctx, timeout)
		err = r.SetInventory(sctx, inv)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failed++
			delay := min(retry(failed), time.Minute)
			log.Warn("inventory not handed to the channel; will retry", "err", err, "fix", ch.Fix(err), "retry_in", delay)
			if clock.Sleep(ctx, delay) != nil {
				return
			}
			continue
		}
		if failed > 0 {
			log.Info("inventory handed to the channel after retrying", "attempts", failed+1)
		}
		failed, seen = 0, v
	}
}

// ownInventory keeps of each host's firing alerts those the channel takes
// (min_severity, route), the way Select filters its notifications.
func ownInventory(ch *Channel, inv channel.Inventory) channel.Inventory {
	out := inv
	out.Hosts = make([]channel.HostInventory, len(inv.Hosts))
	for i, h := range inv.Hosts {
		out.Hosts[i] = h
		out.Hosts[i].Firing = nil
		if sel, ok := ch.Select(alert.Notification{Host: h.Host, Alerts: h.Firing}); ok {
			out.Hosts[i].Firing = sel.Alerts
		}
	}
	return out
}

// CloseSenders closes the senders that hold a connection (io.Closer), each
// at most timeout, all at once.
func CloseSenders(chans []Channel, timeout time.Duration) {
	var wg sync.WaitGroup
	for i := range chans {
		c, ok := chans[i].Sender.(io.Closer)
		if !ok {
			continue
		}
		wg.Go(func() {
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = c.Close()
			}()
			select {
			case <-done:
			case <-time.After(timeout):
			}
		})
	}
	wg.Wait()
}
