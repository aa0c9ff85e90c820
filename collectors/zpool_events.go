package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"syscall"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/zfs"
)

// EventFollower follows `zpool events -f -H -v` so that a pulled or faulted
// disk is seen the moment ZFS sees it, not at the next poll. Each new event
// is published on zpool.event and pokes the status collectors for an
// immediate, debounced poll.
type EventFollower struct {
	Zpool string
	// Poke is called at the first new event and once more after a burst
	// (see debouncer); the daemon polls zpool status on it, the poll that
	// pages.
	Poke func()
	// Settled is called once a burst of events is over; the daemon polls
	// zpool list on it, which is not urgent and should not share the CPU
	// with the status poll.
	Settled  func()
	Debounce time.Duration
	Log      *slog.Logger
	// Now is the clock; events older than the follower's start are history.
	Now func() time.Time
}

// Name is the collector name used in envelopes.
func (f *EventFollower) Name() string { return "zpool_events" }

// Run follows events until ctx ends or zpool exits. The caller restarts it
// with backoff. Events already in the kernel's history when Run starts are
// counted but not published: they are not new incidents.
func (f *EventFollower) Run(ctx context.Context, pub Publisher) error {
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	// Allow for clock granularity between the kernel's stamps and ours.
	started := now().Add(-time.Second)
	cmd := exec.CommandContext(ctx, f.Zpool, "events", "-f", "-H", "-v")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("zpool events: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start zpool events -f: %w", err)
	}
	poke := newDebouncer(f.Debounce, f.Poke, f.Settled)
	defer poke.stop()
	history := 0
	perr := zfs.ParseEvents(out, func(ev zfs.Event) error {
		if !ev.Time.IsZero() && ev.Time.Before(started) {
			history++
			return nil
		}
		f.log().Debug("zpool event", "class", ev.Class, "pool", ev.Pool, "age", now().Sub(ev.Time).Round(time.Millisecond))
		if err := pub.Publish(ctx, facts.KindZpoolEvent, f.Name(), facts.EventData{Event: ev}); err != nil && ctx.Err() == nil {
			f.log().Warn("publish zpool event", "class", ev.Class, "err", err)
		}
		poke.fire()
		return nil
	})
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil
	}
	f.log().Debug("zpool events follower ended", "history_skipped", history)
	if perr != nil {
		return &ParseError{Source: "zpool events", Err: perr}
	}
	if werr != nil {
		return fmt.Errorf("zpool events -f exited: %w", werr)
	}
	return fmt.Errorf("zpool events -f exited")
}

func (f *EventFollower) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

// debouncer turns a burst of fire() calls into at most two calls of fn: the
// first fire after a quiet spell calls fn at once (a pulled disk is news
// now, not d later), and any fires in the next d are folded into one more
// call when d has passed, so that a storm of checksum ereports costs two
// status polls and the last poll sees the state the storm left behind.
// settle, when set, is called once the burst is over (d after the last call
// of fn with no fire since).
type debouncer struct {
	d      time.Duration
	fn     func()
	settle func()
	ch     chan struct{}
	done   chan struct{}
}

func newDebouncer(d time.Duration, fn, settle func()) *debouncer {
	db := &debouncer{d: d, fn: fn, settle: settle, ch: make(chan struct{}, 1), done: make(chan struct{})}
	if db.fn == nil {
		db.fn = func() {}
	}
	if fn == nil && settle == nil {
		return db
	}
	go db.loop()
	return db
}

func (db *debouncer) fire() {
	select {
	case db.ch <- struct{}{}:
	default:
	}
}

func (db *debouncer) loop() {
	var hold <-chan time.Time // non-nil while fn was called less than d ago
	pending := false
	for {
		select {
		case <-db.done:
			return
		case <-db.ch:
			if hold == nil {
				db.fn()
				hold = time.After(db.d)
			} else {
				pending = true
			}
		case <-hold:
			hold = nil
			if pending {
				pending = false
				db.fn()
				hold = time.After(db.d)
			} else if db.settle != nil {
				db.settle()
			}
		}
	}
}

func (db *debouncer) stop() { close(db.done) }
