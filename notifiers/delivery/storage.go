package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/alert"
)

// Alerts about zwatch's own state storage. The storage watch raises them,
// not a rule of the catalogue: they must reach the person when the outbox
// and the rule state cannot be written, so they are delivered directly to
// the channels (docs/rules.md, "zwatch's own storage").
const (
	// NameStateStorageFull: the state directory's filesystem is full.
	NameStateStorageFull = "StateStorageFull"
	// NameStateStorageFailed: the state store refuses writes, or a damaged
	// stream or consumer was found (and repaired, with what was lost).
	NameStateStorageFailed = "StateStorageFailed"
)

// lowFree is the free space under which the state filesystem counts as
// full: JetStream writes blocks of several MiB and the rule state with them.
const lowFree = 16 << 20

// storageWatch learns of every write to the state store (the parts report
// their errors and successes), decides whether the storage is failing,
// pages StateStorageFull or StateStorageFailed directly to the channels,
// stops the health signals while it lasts, and brings JetStream back once
// space is free again.
type storageWatch struct {
	dir   string // the state directory, as the person knows it
	host  string
	b     *bus.Bus
	send  func(ctx context.Context, n alert.Notification) ([]string, error) // direct delivery; nil: none
	log   *slog.Logger
	hold  time.Duration // a failure this long is paged (passing timeouts are not)
	every time.Duration
	free  func(dir string) (uint64, error)

	mu     sync.Mutex
	parts  map[string]partState
	damage []string // damaged state found and repaired, not yet paged
	// firing is the storage alert sent, if any; damaged the damage page.
	firing, damaged *alert.Notification
	damagedAt       time.Time
	// unpublished are storage pages sent only directly, for the outbox.
	unpublished []alert.Notification
	restartedAt time.Time
}

type partState struct {
	err   error
	since time.Time // first failure of this spell
	// slow: every failure of this spell was a timeout, the store answering
	// late (a busy disk, a starved CPU), not refusing.
	slow bool
}

// slowHold is how long writes may time out before that is paged: under a
// scrub on an SD card, or a starved CPU (the loaded e2e guest: 5-10 s
// spells), JetStream answers late but keeps what it is given.
const slowHold = 30 * time.Second

// isTimeout tells a write that got no answer in time from one refused.
func isTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders)
}

func newStorageWatch(dir, host string, b *bus.Bus, log *slog.Logger) *storageWatch {
	return &storageWatch{dir: dir, host: host, b: b, log: log, hold: 5 * time.Second, every: 2 * time.Second,
		free: freeBytes, parts: map[string]partState{}}
}

// report records the outcome of one write by part ("facts", "outbox",
// "state"): err, or nil after a success.
func (s *storageWatch) report(part string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[part]
	switch {
	case err == nil:
		p = partState{}
	case p.err == nil:
		p = partState{err: err, since: time.Now(), slow: isTimeout(err)}
	default:
		p.err = err
		p.slow = p.slow && isTimeout(err)
	}
	s.parts[part] = p
}

// repaired records damaged state that was found and repaired, with what
// may have been lost; it is paged as StateStorageFailed.
func (s *storageWatch) repaired(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.damage = append(s.damage, what)
}

// failing lists the parts whose last write failed, with since when.
func (s *storageWatch) failing() (names []string, since time.Time, errs []string) {
	names, since, errs, _ = s.failingSlow()
	return names, since, errs
}

// failingSlow is failing, and whether every failure was a timeout.
func (s *storageWatch) failingSlow() (names []string, since time.Time, errs []string, slow bool) {
	slow = true
	for name, p := range s.parts {
		if p.err == nil {
			continue
		}
		slow = slow && p.slow
		names = append(names, name)
		errs = append(errs, name+": "+p.err.Error())
		if since.IsZero() || p.since.Before(since) {
			since = p.since
		}
	}
	sort.Strings(names)
	sort.Strings(errs)
	return names, since, errs, slow
}

// holdFor is how long a failing spell lasts before it is paged: longer
// when the store only answered late and space is not short.
func (s *storageWatch) holdFor(slow bool, free uint64, ferr error) time.Duration {
	if slow && ferr == nil && free >= lowFree {
		return max(s.hold, slowHold)
	}
	return s.hold
}

// degraded says a write has failed lately: the rule engine then also reads
// facts as they are published.
func (s *storageWatch) degraded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, _, _ := s.failing()
	return len(names) > 0
}

// problem is what is wrong with the storage, for systemd's status line
// and the health check; "" while it works.
func (s *storageWatch) problem() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	names, since, _, slow := s.failingSlow()
	s.mu.Unlock()
	if len(names) == 0 {
		return ""
	}
	free, ferr := s.free(s.dir) // a full disk's writes time out too
	if time.Since(since) < s.holdFor(slow, free, ferr) {
		return ""
	}
	return fmt.Sprintf("state storage under %s failing since %s (%s)", s.dir, since.Format(time.TimeOnly), strings.Join(names, ", "))
}

func (s *storageWatch) run(ctx context.Context) error {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.check(ctx, time.Now())
		}
	}
}

// check pages, resolves and recovers; called every few seconds.
func (s *storageWatch) check(ctx context.Context, now time.Time) {
	free, ferr := s.free(s.dir)
	s.mu.Lock()
	names, since, errs, slow := s.failingSlow()
	damage := s.damage
	s.damage = nil
	s.mu.Unlock()

	if len(damage) > 0 {
		n := s.note(NameStateStorageFailed, alert.Firing, now, free, ferr,
			"damaged state store found and repaired: "+strings.Join(damage, "; "),
			"check `zwatch alerts` and the pools with `zpool status -x`: what is listed as lost may have held alerts; if this repeats, check the disk under "+s.dir+" (`dmesg`, `smartctl -a`)")
		s.deliver(ctx, n)
		s.damaged, s.damagedAt = &n, now
	}
	if s.damaged != nil && len(names) == 0 && now.Sub(s.damagedAt) >= time.Minute {
		s.resolve(ctx, s.damaged, now, free, ferr)
		s.damaged = nil
	}

	switch {
	case len(names) > 0 && now.Sub(since) >= s.hold:
		// Writes that only time out are paged later; the reload below,
		// which a full disk's recovery needs, does not wait for that.
		if s.firing == nil && now.Sub(since) >= s.holdFor(slow, free, ferr) {
			n := s.failingNote(now, free, ferr, errs)
			s.log.Error("state storage failing: alerts go directly to the channels until it works again",
				"alert", n.Alerts[0].Name, "state_dir", s.dir, "free", units.IEC(free), "failing", names)
			s.deliver(ctx, n)
			s.firing = &n
		}
		// A stream that met a write error refuses every write until it is
		// loaded again: once there is space, reload JetStream.
		if s.b != nil && s.b.Embedded() && ferr == nil && free >= lowFree && now.Sub(s.restartedAt) >= 30*time.Second {
			s.restartedAt = now
			s.log.Warn("reloading JetStream to recover from the storage failure", "free", units.IEC(free))
			if err := s.b.RestartJetStream(); err != nil {
				s.log.Error("JetStream reload failed", "err", err)
			} else if err := checkStreams(ctx, s.b, s); err != nil {
				s.log.Error("cannot check the state store for lost messages after the reload", "err", err)
			}
		}
	case len(names) == 0 && s.firing != nil:
		s.log.Info("state storage works again", "state_dir", s.dir, "free", units.IEC(free))
		s.flushUnpublished(ctx)
		s.resolve(ctx, s.firing, now, free, ferr)
		s.firing = nil
	}
	if len(names) == 0 {
		s.flushUnpublished(ctx)
	}
}

func (s *storageWatch) failingNote(now time.Time, free uint64, ferr error, errs []string) alert.Notification {
	full := ferr == nil && free < lowFree
	for _, e := range errs {
		full = full || strings.Contains(e, "insufficient storage") || strings.Contains(e, "no space left")
	}
	if full {
		return s.note(NameStateStorageFull, alert.Firing, now, free, ferr,
			"the filesystem of zwatch's state directory "+s.dir+" is full: alerts cannot be stored, so they are sent directly (best effort, no retry)",
			"free space on that filesystem (`df -h "+s.dir+"`; old logs, snapshots, a dataset that did not mount and filled its mount point); zwatch recovers by itself, no restart needed")
	}
	return s.note(NameStateStorageFailed, alert.Firing, now, free, ferr,
		"zwatch's state store under "+s.dir+" refuses writes ("+strings.Join(errs, "; ")+"): alerts are sent directly (best effort, no retry)",
		"check the disk and filesystem under "+s.dir+" (`dmesg`, `df -h`, `touch "+s.dir+"/x`); zwatch retries by itself; if it does not recover, restart it (`systemctl restart zwatch`)")
}

// note builds one storage notification; free space and the fix are in it.
func (s *storageWatch) note(name string, state alert.State, now time.Time, free uint64, ferr error, what, fix string) alert.Notification {
	freeText := units.IEC(free) + " free"
	if ferr != nil {
		freeText = "free space unknown: " + ferr.Error()
	}
	labels := map[string]string{"alertname": name, "host": s.host, "state_dir": s.dir}
	a := alert.Alert{
		Name: name, Severity: alert.Critical, State: state, Labels: labels, Fingerprint: alert.Fingerprint(labels),
		Summary:     fmt.Sprintf("zwatch on %s: state storage %s (%s)", s.host, map[string]string{NameStateStorageFull: "full", NameStateStorageFailed: "failing"}[name], freeText),
		Description: what + ". Fix: " + fix + ".",
		Evidence:    map[string]string{"state_dir": s.dir, "free": freeText},
		StartsAt:    now,
	}
	return alert.Notification{
		ID:       fmt.Sprintf("storage-%s-%d", a.Fingerprint[:12], now.UnixNano()),
		GroupKey: "storage/" + s.host, Host: s.host, Status: state, Alerts: []alert.Alert{a}, Created: now,
	}
}

// resolve sends the resolved notice of a storage page through the outbox
// (it works again), or directly if it does not.
func (s *storageWatch) resolve(ctx context.Context, fired *alert.Notification, now time.Time, free uint64, ferr error) {
	a := fired.Alerts[0]
	end := now
	a.State, a.EndsAt = alert.Resolved, &end
	a.Summary = fmt.Sprintf("zwatch on %s: state storage works again (%s free)", s.host, units.IEC(free))
	if ferr != nil {
		a.Summary = fmt.Sprintf("zwatch on %s: state storage works again", s.host)
	}
	n := alert.Notification{ID: fmt.Sprintf("storage-%s-%d", a.Fingerprint[:12], now.UnixNano()), GroupKey: fired.GroupKey,
		Host: s.host, Status: alert.Resolved, Alerts: []alert.Alert{a}, Created: now}
	if err := s.publish(ctx, n); err != nil {
		s.deliver(ctx, n)
	}
}

// deliver sends a storage page directly (the outbox may be what fails) and
// keeps it for the outbox, where its channels will skip it.
func (s *storageWatch) deliver(ctx context.Context, n alert.Notification) {
	if s.send != nil {
		if _, err := s.send(ctx, n); err != nil {
			s.log.Error("storage alert not delivered to every channel", "alert", n.Alerts[0].Name, "err", err)
		}
	}
	s.unpublished = append(s.unpublished, n)
}

func (s *storageWatch) flushUnpublished(ctx context.Context) {
	for len(s.unpublished) > 0 {
		if err := s.publish(ctx, s.unpublished[0]); err != nil {
			return
		}
		s.unpublished = s.unpublished[1:]
	}
}

func (s *storageWatch) publish(ctx context.Context, n alert.Notification) error {
	if s.b == nil {
		return fmt.Errorf("no bus")
	}
	data, err := bus.WrapSchema(bus.SchemaNotification, n.Host, "zwatch", n.Created, n)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err = s.b.JS.Publish(pctx, bus.Subject(n.Host, bus.KindAlert), data, jetstream.WithMsgID(n.ID))
	s.report("outbox", err)
	return err
}

// freeBytes is the space left to an unprivileged writer on dir's filesystem.
func freeBytes(dir string) (uint64, error) {
	free, _, err := bus.StoreSpace(dir)
	return free, err
}
