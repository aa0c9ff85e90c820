package delivery_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// wallClock is a clock a test sets to any time of day.
type wallClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *wallClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *wallClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// TestQuietHours: a channel quiet from 22:00 to 07:30. At 23:10 a critical
// page goes out at once, and so does an incident's page when it turns
// critical (the warning before it is never sent); warnings wait, the ones
// each newer notice of its incident supersedes are dropped, and a warning
// that fired and ended in the night waits as its resolved notice. A
// restart in the night loses none of it. At 07:31 what waited goes out,
// each incident once, and never before.
func TestQuietHours(t *testing.T) {
	dir := t.TempDir()
	f := startFlaky(t)
	hook := hookTo("hook", f.URL)
	hook.Quiet = &config.QuietHours{From: "22:00", To: "07:30"}
	cfg := fastRetry(notifytest.NotifyConfig(hook))
	clock := &wallClock{t: time.Date(2026, 12, 7, 23, 10, 0, 0, time.Local)}
	opts := delivery.Options{AckWait: 2 * time.Second, Clock: clock.now}

	b := notifytest.OpenBus(t, dir)
	stop := notifytest.RunNotifiers(t, b, cfg, opts)
	notifytest.Publish(t, b, incident("tank", "tank-warn", alert.Warning))
	notifytest.Publish(t, b, incident("home", "home-crit", alert.Critical))
	notifytest.Publish(t, b, incident("cache", "cache-warn", alert.Warning))
	notifytest.Publish(t, b, warningResolved("cache", "cache-resolved"))
	notifytest.Publish(t, b, incident("pics", "pics-warn", alert.Warning))
	notifytest.WaitFor(t, 10*time.Second, "the critical page", func() bool { return slices.Contains(f.got(), "home-crit") })
	notifytest.Publish(t, b, incident("pics", "pics-crit", alert.Critical))
	notifytest.WaitFor(t, 10*time.Second, "the page that turned critical", func() bool { return slices.Contains(f.got(), "pics-crit") })
	time.Sleep(time.Second) // room for a warning to slip out
	if got := f.got(); !slices.Equal(got, []string{"home-crit", "pics-crit"}) {
		t.Fatalf("at 23:10 the channel sent %v: want only the two critical pages", got)
	}

	// A restart in the night: what waits stays in the outbox and waits on.
	stop()
	b.Close()
	b2 := notifytest.OpenBus(t, dir)
	defer b2.Close()
	clock.set(time.Date(2026, 12, 8, 3, 0, 0, 0, time.Local))
	notifytest.Publish(t, b2, incident("tank", "tank-warn-2", alert.Warning))
	notifytest.RunNotifiers(t, b2, cfg, opts)
	time.Sleep(3 * time.Second) // past AckWait: the first run's messages are back
	if got := f.got(); len(got) != 2 {
		t.Fatalf("at 03:00, after a restart, the channel sent %v: want nothing more", got)
	}

	clock.set(time.Date(2026, 12, 8, 7, 31, 0, 0, time.Local))
	notifytest.WaitFor(t, 10*time.Second, "what waited for the morning", func() bool { return len(f.got()) >= 4 })
	time.Sleep(time.Second) // room for a superseded one to show up
	got := f.got()
	morning := got[2:]
	slices.Sort(morning)
	if !slices.Equal(morning, []string{"cache-resolved", "tank-warn-2"}) {
		t.Errorf("at 07:31 the channel sent %v: want each waiting incident's newest notice once (cache-resolved, tank-warn-2)", got[2:])
	}
}

// warningResolved is the resolved notice of a warning of group g.
func warningResolved(g, id string) alert.Notification {
	n := incident(g, id, "")
	n.Alerts[0].Severity = alert.Warning
	return n
}

// A channel without quiet hours sends warnings at any time.
func TestNoQuietHours(t *testing.T) {
	f := startFlaky(t)
	cfg := fastRetry(notifytest.NotifyConfig(hookTo("hook", f.URL)))
	clock := &wallClock{t: time.Date(2026, 12, 7, 23, 10, 0, 0, time.Local)}
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	notifytest.RunNotifiers(t, b, cfg, delivery.Options{Clock: clock.now})
	notifytest.Publish(t, b, incident("tank", "tank-warn", alert.Warning))
	notifytest.WaitFor(t, 10*time.Second, "the warning", func() bool { return slices.Contains(f.got(), "tank-warn") })
}
