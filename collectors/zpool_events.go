package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/zfs"
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
	Settled func()
	// PoolChanged is called once a burst of pool events (a pool imported,
	// exported, created or destroyed) has been quiet for poolSettle; the
	// daemon polls the datasets and zpool_import collectors on it. Key loads
	// and unloads post no event (OpenZFS logs them as ioctl history, which
	// posts none), so keys are seen at the datasets interval.
	PoolChanged func()
	// Urgent, when set, is called with the device path of each new event
	// that names a misbehaving disk (urgesSmart): the daemon reads that
	// disk's SMART now rather than at the next SMART round.
	Urgent   func(target string)
	Debounce time.Duration
	Log      *slog.Logger
	// Now is the clock; events older than the follower's start are history.
	Now func() time.Time

	opened func(time.Time) // OnOpen
}

// Name is the collector name used in envelopes.
func (f *EventFollower) Name() string { return "zpool_events" }

// OnOpen sets what Run calls once zpool events -f has started.
func (f *EventFollower) OnOpen(fn func(time.Time)) { f.opened = fn }

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
	if f.opened != nil {
		f.opened(now())
	}
	poke := newDebouncer(f.Debounce, f.Poke, f.Settled)
	defer poke.stop()
	poolPoke := newDebouncer(poolSettle, nil, f.PoolChanged)
	defer poolPoke.stop()
	burst := newBurst(f.log(), f.Debounce)
	defer burst.stop()
	history := 0
	perr := zfs.ParseEvents(out, func(ev zfs.Event) error {
		if !ev.Time.IsZero() && ev.Time.Before(started) {
			history++
			return nil
		}
		lag := time.Duration(0)
		if !ev.Time.IsZero() {
			lag = max(now().Sub(ev.Time), 0)
		}
		if !burst.note(ev, lag) {
			return nil // the same news as an event published moments ago
		}
		f.log().Debug("zpool event", "class", ev.Class, "pool", ev.Pool, "age", lag.Round(time.Millisecond))
		if err := Publish(ctx, pub, facts.ZpoolEvent, f.Name(), facts.EventData{Event: ev}); err != nil && ctx.Err() == nil {
			f.log().Warn("publish zpool event", "class", ev.Class, "err", err)
		}
		poke.fire()
		if f.Urgent != nil && ev.VdevPath != "" && urgesSmart(ev.Class) {
			f.Urgent(ev.VdevPath)
		}
		if isPoolEvent(ev.Class) {
			poolPoke.fire()
		}
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

// isPoolEvent says whether class is a pool coming or going
// (sys/sysevent/eventdefs.h ESC_ZFS_POOL_*, posted by module/zfs/spa.c).
func isPoolEvent(class string) bool {
	switch class {
	case "sysevent.fs.zfs.pool_import", "sysevent.fs.zfs.pool_export",
		"sysevent.fs.zfs.pool_create", "sysevent.fs.zfs.pool_destroy":
		return true
	}
	return false
}

// urgesSmart says whether an event of class names a disk that misbehaves:
// an I/O or checksum error, an I/O slower than zio_slow_io_ms, one hung
// past zfs_deadman_ziotime_ms, or a device changing state (faulted,
// removed, back). Folded repeats are not asked again; the smart collector
// bounds the rest (smart.urgent_min_interval per disk).
func urgesSmart(class string) bool {
	switch class {
	case "ereport.fs.zfs.io", "ereport.fs.zfs.checksum", "ereport.fs.zfs.delay",
		"ereport.fs.zfs.deadman", "resource.fs.zfs.statechange":
		return true
	}
	return false
}

// poolSettle is how long pool events must be quiet before PoolChanged: the
// export event is posted before the pool leaves the namespace, and zpool
// import mounts the datasets after its import event.
const poolSettle = 2 * time.Second

// foldWindow is how long identical events (same class, pool, device and
// device state) after a published one are folded into it: a suspended
// pool posts one ereport.fs.zfs.data per failed block, thousands in a
// burst, and each says the same. A replug (statechange to another state)
// is a different event and goes through.
const foldWindow = 10 * time.Second

// maxFoldKeys bounds the identities remembered for folding.
const maxFoldKeys = 4096

// laggingAfter is the lag (event time to read) above which a burst is
// logged as a warning: the follower fell behind the kernel.
const laggingAfter = 5 * time.Second

// burst folds identical events and reports each burst in one log line:
// how many events came, how many were published and folded, and the
// largest lag between an event's time and its reading. Folded events cost
// a map lookup, so the follower keeps up with any burst the kernel's ring
// (zfs_zevent_len_max) can hold.
type burst struct {
	log   *slog.Logger
	quiet time.Duration

	mu                        sync.Mutex
	first                     map[string]time.Time // identity -> when its event was published
	events, published, folded int
	maxLag                    time.Duration
	timer                     *time.Timer
}

func newBurst(log *slog.Logger, quiet time.Duration) *burst {
	if quiet <= 0 {
		quiet = 200 * time.Millisecond
	}
	return &burst{log: log, quiet: quiet, first: map[string]time.Time{}}
}

// note counts ev and reports whether it is news to publish.
func (b *burst) note(ev zfs.Event, lag time.Duration) bool {
	key := ev.Class + "\x00" + ev.Pool + "\x00" + ev.VdevGUID + "\x00" + ev.VdevPath + "\x00" + ev.VdevState
	at := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events++
	b.maxLag = max(b.maxLag, lag)
	if b.timer == nil {
		b.timer = time.AfterFunc(b.quiet, b.end)
	} else {
		b.timer.Reset(b.quiet)
	}
	if t, ok := b.first[key]; ok && at.Sub(t) < foldWindow {
		b.folded++
		return false
	}
	if len(b.first) >= maxFoldKeys {
		clear(b.first)
	}
	b.first[key] = at
	b.published++
	return true
}

// end logs the burst that just went quiet.
func (b *burst) end() {
	b.mu.Lock()
	events, published, folded, lag := b.events, b.published, b.folded, b.maxLag
	b.events, b.published, b.folded, b.maxLag = 0, 0, 0, 0
	b.mu.Unlock()
	if events == 0 {
		return
	}
	level := slog.LevelDebug
	switch {
	case lag > laggingAfter:
		level = slog.LevelWarn
	case folded > 0:
		level = slog.LevelInfo
	}
	b.log.Log(context.Background(), level, "zpool events burst", "events", events, "published", published,
		"folded", folded, "max_lag", lag.Round(time.Millisecond))
}

func (b *burst) stop() {
	b.mu.Lock()
	t := b.timer
	b.mu.Unlock()
	if t != nil && t.Stop() {
		b.end()
	}
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
