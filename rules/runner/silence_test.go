package runner

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/silence"
)

// fakeClock is the engine's clock in these tests: it moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// silenceRig is the rule engine (RunWith) on a real embedded bus, with a
// fake clock, restartable.
type silenceRig struct {
	t    *testing.T
	ctx  context.Context
	b    *bus.Bus
	kv   jetstream.KeyValue
	clk  *fakeClock
	cfg  config.RulesConfig
	stop func()
}

func newSilenceRig(t *testing.T, ctx context.Context) *silenceRig {
	b, kv := openStateBucket(ctx, t)
	cfg := config.DefaultRules()
	cfg.GroupWait = 0
	// Days pass on the fake clock with no facts: the watcher would page
	// about that, which is not what these tests look at.
	cfg.Disabled = []string{"CollectorStale", "HostSilent", "MonitoringBlindSpot", "CommandHangs"}
	r := &silenceRig{t: t, ctx: ctx, b: b, kv: kv, clk: &fakeClock{t: time.Now().UTC()}, cfg: cfg}
	t.Cleanup(func() {
		if r.stop != nil {
			r.stop()
		}
	})
	return r
}

// start runs the engine until restart or the end of the test.
func (r *silenceRig) start() {
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() {
		done <- RunWith(ctx, r.b, r.cfg, Options{Now: r.clk.Now, Host: "srv"}, nil)
	}()
	r.stop = func() {
		cancel()
		if err := <-done; err != nil {
			r.t.Errorf("RunWith: %v", err)
		}
		r.stop = nil
	}
}

func (r *silenceRig) restart() {
	r.stop()
	r.start()
}

// publish puts a zpool status fact of pools on the bus and waits until the
// engine applied it, and a tick more.
func (r *silenceRig) publish(pools []*zfs.Pool) {
	r.t.Helper()
	msg, err := bus.Wrap(facts.ZpoolStatus.Name(), testHost, "zpool_status", time.Now(), facts.StatusData{Source: "text", Pools: pools})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.b.Publish(r.ctx, bus.Subject(testHost, facts.ZpoolStatus.Name()), msg); err != nil {
		r.t.Fatal(err)
	}
	waitUntil(r.t, 15*time.Second, "fact applied", func() bool {
		c, err := r.b.JS.Consumer(r.ctx, bus.StreamFacts, ConsumerName)
		if err != nil {
			return false
		}
		info, err := c.Info(r.ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
	time.Sleep(1500 * time.Millisecond)
}

// outbox reads every notification in ZWATCH_ALERTS.
func (r *silenceRig) outbox() []alert.Notification {
	r.t.Helper()
	s, err := r.b.JS.Stream(r.ctx, bus.StreamAlerts)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := s.Info(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []alert.Notification
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(r.ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			r.t.Fatal(err)
		}
		var n alert.Notification
		if _, err := bus.Decode(m.Data, "notification", &n); err != nil {
			r.t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// lines is the outbox after the first skip notifications, one line per alert.
func (r *silenceRig) lines(skip int) []string {
	ns := r.outbox()
	if skip > len(ns) {
		skip = len(ns)
	}
	out := sentNames(noteLines(ns[skip:]))
	sort.Strings(out)
	return out
}

func (r *silenceRig) add(matchers string, d time.Duration, max alert.Severity) silence.Silence {
	r.t.Helper()
	now := r.clk.Now()
	s := newSilence(r.t, matchers, now, now.Add(d), max)
	if err := silence.Create(r.ctx, r.kv, &s); err != nil {
		r.t.Fatal(err)
	}
	return s
}

// On the real bus with a fake clock: a silence stored as `zwatch silence
// add` stores it keeps the DEGRADED pool's warnings from the outbox, also
// after the engine restarts and two days pass; the critical rise goes out;
// the silence expires by itself with one notice, recorded so that a
// restart does not send it again, and the pages it held back go out.
func TestRunSilenceLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	r := newSilenceRig(t, ctx)
	pool := newRaidz2(t)
	r.start()
	s := r.add("pool=tank", 7*24*time.Hour, alert.Warning)
	r.publish(pool.Fail(0))
	r.publish(pool.Fail(1))
	if got := r.lines(0); len(got) != 0 {
		t.Fatalf("silenced warnings reached the outbox: %v", got)
	}
	as, err := rules.Active(ctx, r.b)
	if err != nil {
		t.Fatal(err)
	}
	silenced := 0
	for _, a := range as {
		if a.Silenced != nil && a.Silenced.ID == s.ID && a.Silenced.Comment == s.Comment && a.Silenced.EndsAt.Equal(s.EndsAt) {
			silenced++
		}
	}
	if silenced != 4 {
		t.Errorf("%d of %d alerts marked silenced by %s, want 4: %+v", silenced, len(as), s.ID, as)
	}

	// The engine restarts and two days pass: the silence still holds.
	r.restart()
	r.clk.Add(48 * time.Hour)
	time.Sleep(2500 * time.Millisecond)
	if got := r.lines(0); len(got) != 0 {
		t.Fatalf("after a restart the silenced warnings were sent: %v", got)
	}

	// A second disk fails: the critical rise is above the silence.
	r.publish(pool.Fail(2))
	sameList(t, r.lines(0), []string{"firing critical RedundancyMargin", "firing critical VdevState", "firing critical VdevState"})
	before := len(r.outbox())

	// The silence's end passes: one notice, then the pages it held back
	// (the warnings, never sent, go now) with the criticals' repeat, due
	// after 4 h.
	r.clk.Add(6 * 24 * time.Hour)
	waitUntil(t, 10*time.Second, "expiry notice and pages", func() bool { return len(r.outbox()) >= before+2 })
	time.Sleep(1500 * time.Millisecond)
	ns := r.outbox()[before:]
	if len(ns) < 2 || ns[0].ID != rules.ExpiryNoticeID(s.ID) || ns[0].Host != "srv" || ns[0].Alerts[0].Severity != alert.Info {
		t.Fatalf("after the end: %v", noteLines(ns))
	}
	if sum := ns[0].Alerts[0].Summary; !strings.HasPrefix(sum, "silence "+s.ID[:8]+` for pool="tank" expired; alerts that still fire page again: `) ||
		!strings.Contains(sum, "PoolState on nas1") || strings.Contains(sum, "\n") {
		t.Errorf("notice %q", sum)
	}
	pages := sentNames(noteLines(ns[1:]))
	sort.Strings(pages)
	sameList(t, pages, []string{"firing critical RedundancyMargin", "firing critical VdevState", "firing critical VdevState",
		"firing warning PoolState", "firing warning ScrubOverdue"})
	got, err := silence.Get(ctx, r.kv, s.ID)
	if err != nil || got.Noticed == nil {
		t.Fatalf("the notice was not recorded: %+v %v", got, err)
	}

	// Restarted, the engine does not send the notice again.
	count := len(r.outbox())
	r.restart()
	r.clk.Add(time.Minute)
	time.Sleep(2500 * time.Millisecond)
	if more := r.outbox()[count:]; len(more) != 0 {
		t.Errorf("after a restart: %v", noteLines(more))
	}
}

// Expired by hand (`zwatch silence expire`), a silence lets its held-back
// page through at once and sends no expiry notice.
func TestRunSilenceExpiredByHand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := newSilenceRig(t, ctx)
	pool := newRaidz2(t)
	r.start()
	r.publish(pool.Fail(0))
	s := r.add("alertname=VdevState", 7*24*time.Hour, alert.Warning)
	r.publish(pool.Fail(1))
	sameList(t, r.lines(0), []string{"firing warning PoolState", "firing warning RedundancyMargin", "firing warning ScrubOverdue"})
	before := len(r.outbox())

	cur, err := silence.Get(ctx, r.kv, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := silence.Expire(ctx, r.kv, cur, "bob", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 15*time.Second, "the held-back page", func() bool { return len(r.outbox()) > before })
	time.Sleep(1500 * time.Millisecond)
	sameList(t, r.lines(before), []string{"firing warning VdevState"})
}

// Two engines on one bus at once (a lease changing hands in a fleet): the
// expiry notice reaches the outbox once, and is recorded once.
func TestRunSilenceNoticeOnceWithTwoEngines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := newSilenceRig(t, ctx)
	s := r.add("pool=tank", time.Hour, alert.Warning)
	r.start()
	first := r.stop
	r.start()
	second := r.stop
	r.stop = func() { first(); second() }
	r.clk.Add(2 * time.Hour)
	waitUntil(t, 10*time.Second, "expiry notice", func() bool { return len(r.outbox()) > 0 })
	time.Sleep(3 * time.Second)
	ns := r.outbox()
	if len(ns) != 1 || ns[0].ID != rules.ExpiryNoticeID(s.ID) {
		t.Fatalf("outbox: %v", noteLines(ns))
	}
	if !strings.HasSuffix(ns[0].Alerts[0].Summary, "expired; no alert it silenced still fires") {
		t.Errorf("notice %q", ns[0].Alerts[0].Summary)
	}
	got, err := silence.Get(ctx, r.kv, s.ID)
	if err != nil || got.Noticed == nil {
		t.Fatalf("not recorded: %+v %v", got, err)
	}
}
