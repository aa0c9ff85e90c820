package delivery_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// incident is one notification of group g: firing at severity sev, or its
// resolved notice when sev is "".
func incident(g, id string, sev alert.Severity) alert.Notification {
	n := notifytest.Firing("nas1", id)
	n.GroupKey = "host=nas1,pool=" + g
	a := n.Alerts[0]
	a.Labels = map[string]string{"alertname": a.Name, "host": "nas1", "pool": g}
	a.Fingerprint = alert.Fingerprint(a.Labels)
	if sev == "" {
		end := time.Now()
		a.State, a.EndsAt, n.Status = alert.Resolved, &end, alert.Resolved
	} else {
		a.Severity = sev
	}
	n.Alerts = []alert.Alert{a}
	return n
}

// flaky is a webhook that refuses or holds chosen notifications and
// records, in order, the ids it accepted.
type flaky struct {
	*notifytest.HTTPSink
	mu       sync.Mutex
	refuse   map[string]int           // id → how many more attempts get 503
	hold     map[string]chan struct{} // id → its first attempt waits for this, then gets 503
	accepted []string
	at       map[string]time.Time
}

func startFlaky(t *testing.T) *flaky {
	f := &flaky{HTTPSink: notifytest.StartHTTP(t, ""), refuse: map[string]int{}, hold: map[string]chan struct{}{}, at: map[string]time.Time{}}
	f.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		f.Record(h) // every attempt
		id := fmt.Sprint(h.JSON(t)["id"])
		f.mu.Lock()
		wait := f.hold[id]
		delete(f.hold, id)
		refused := f.refuse[id] > 0
		if refused {
			f.refuse[id]--
		}
		f.mu.Unlock()
		if wait != nil {
			<-wait
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if refused {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		f.mu.Lock()
		f.accepted = append(f.accepted, id)
		f.at[id] = time.Now()
		f.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	return f
}

func (f *flaky) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.accepted)
}

func (f *flaky) before(t *testing.T, first, then string) {
	t.Helper()
	got := f.got()
	i, j := slices.Index(got, first), slices.Index(got, then)
	if i < 0 || j < 0 || i > j {
		t.Errorf("accepted %v: want %s before %s", got, first, then)
	}
}

// TestOutboxOrderPerIncident: the webhook refuses an incident's firing page
// a few times; its resolved notice, and a newer, higher severity of another
// incident's page, arrive meanwhile. Each incident reaches the receiver in
// order, every notification once.
func TestOutboxOrderPerIncident(t *testing.T) {
	f := startFlaky(t)
	f.refuse["tank-fire"] = 3
	f.refuse["home-warn"] = 2
	cfg := fastRetry(notifytest.NotifyConfig(hookTo("hook", f.URL)))
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	notifytest.RunNotifiers(t, b, cfg, delivery.Options{})

	notifytest.Publish(t, b, incident("tank", "tank-fire", alert.Critical))
	notifytest.Publish(t, b, incident("home", "home-warn", alert.Warning))
	notifytest.WaitFor(t, 5*time.Second, "the first refusals", func() bool { return len(f.All()) >= 2 })
	notifytest.Publish(t, b, incident("tank", "tank-resolved", ""))
	notifytest.Publish(t, b, incident("home", "home-crit", alert.Critical))
	notifytest.Publish(t, b, incident("other", "other-fire", alert.Critical))

	notifytest.WaitFor(t, 20*time.Second, "every notification", func() bool { return len(f.got()) >= 5 })
	time.Sleep(500 * time.Millisecond) // room for a duplicate to show up
	f.before(t, "tank-fire", "tank-resolved")
	f.before(t, "home-warn", "home-crit")
	got := f.got()
	if len(got) != 5 {
		t.Errorf("accepted %v: want each of the 5 notifications once", got)
	}
	// The third incident did not wait for the retries of the other two.
	if slices.Index(got, "other-fire") > 1 {
		t.Errorf("accepted %v: other-fire waited behind other incidents' retries", got)
	}
}

// TestOutboxNewIncidentDoesNotWaitBehindAHang: one incident's page hangs at
// the receiver until send_timeout; a new CRITICAL of another incident goes
// out at once, while the hung incident's resolved notice waits for its page.
func TestOutboxNewIncidentDoesNotWaitBehindAHang(t *testing.T) {
	f := startFlaky(t)
	release := make(chan struct{})
	f.hold["tank-fire"] = release
	cfg := fastRetry(notifytest.NotifyConfig(hookTo("hook", f.URL)))
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	notifytest.RunNotifiers(t, b, cfg, delivery.Options{})

	notifytest.Publish(t, b, incident("tank", "tank-fire", alert.Warning))
	<-f.Got // the page's first attempt is at the receiver, held
	notifytest.Publish(t, b, incident("tank", "tank-resolved", ""))
	start := time.Now()
	notifytest.Publish(t, b, incident("home", "home-crit", alert.Critical))
	notifytest.WaitFor(t, 5*time.Second, "the new critical", func() bool { return slices.Contains(f.got(), "home-crit") })
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the new critical took %s behind a hung send", took)
	}
	if slices.Contains(f.got(), "tank-resolved") {
		t.Errorf("accepted %v: the resolved notice overtook its hung page", f.got())
	}
	close(release)
	notifytest.WaitFor(t, 20*time.Second, "the hung incident", func() bool { return len(f.got()) == 3 })
	f.before(t, "tank-fire", "tank-resolved")
}

// TestOutboxOrderAcrossACrash: the notifier is killed while an incident's
// page hangs at the receiver; after the restart the incident's resolved
// notice is new in the outbox, and the page comes back only after AckWait.
// The notice waits for the page; another incident does not.
func TestOutboxOrderAcrossACrash(t *testing.T) {
	dir := t.TempDir()
	f := startFlaky(t)
	release := make(chan struct{})
	f.hold["tank-fire"] = release
	cfg := fastRetry(notifytest.NotifyConfig(hookTo("hook", f.URL)))
	cfg.SendTimeout = config.Duration(20 * time.Second)
	opts := delivery.Options{AckWait: 2 * time.Second}

	b := notifytest.OpenBus(t, dir)
	notifytest.Publish(t, b, incident("tank", "tank-fire", alert.Critical))
	stop := notifytest.RunNotifiers(t, b, cfg, opts)
	<-f.Got
	// "kill -9": the connection goes away without an ack, then the server.
	b.NC.Close()
	b.Close()
	close(release)
	stop()

	b2 := notifytest.OpenBus(t, dir)
	defer b2.Close()
	notifytest.Publish(t, b2, incident("tank", "tank-resolved", ""))
	notifytest.Publish(t, b2, incident("home", "home-crit", alert.Critical))
	start := time.Now()
	notifytest.RunNotifiers(t, b2, cfg, opts)
	notifytest.WaitFor(t, 20*time.Second, "every notification", func() bool { return len(f.got()) >= 3 })
	time.Sleep(500 * time.Millisecond)
	f.before(t, "tank-fire", "tank-resolved")
	if got := f.got(); len(got) != 3 {
		t.Errorf("accepted %v: want each notification once", got)
	}
	f.mu.Lock()
	took := f.at["home-crit"].Sub(start)
	f.mu.Unlock()
	if took > time.Second {
		t.Errorf("the other incident's page took %s after the restart: it waited for the redelivery", took)
	}
}

// TestOutboxRestartBesideAPeer: two notifier processes share a channel's
// consumer, as the servers of a fleet do. While the peer's webhook request
// for one incident hangs, another incident's page is delivered; then one
// process restarts. The restarted one cannot tell which messages above the
// consumer's ack floor are still pending, so both incidents wait for their
// messages' return. Once the peer's request ends and the floor passes them,
// neither waits any longer: both resolved notices, taken by the restarted
// process, go out at once instead of after AckWait.
func TestOutboxRestartBesideAPeer(t *testing.T) {
	hook := notifytest.StartHTTP(t, "")
	release := make(chan struct{})
	var mu sync.Mutex
	at := map[string]time.Time{}
	hook.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		hook.Record(h)
		id := fmt.Sprint(h.JSON(t)["id"])
		if id == "tank-fire" {
			select { // the peer's request hangs, then is accepted
			case <-release:
			case <-h.Context.Done():
				return
			}
		}
		mu.Lock()
		at[id] = time.Now()
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	accepted := func(id string) (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := at[id]
		return a, ok
	}
	cfg := notifytest.NotifyConfig(hookTo("hook", hook.URL))
	cfg.SendTimeout = config.Duration(20 * time.Second)
	opts := delivery.Options{AckWait: 15 * time.Second}
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()

	stopPeer := notifytest.RunNotifiers(t, b, cfg, opts)
	notifytest.Publish(t, b, incident("tank", "tank-fire", alert.Critical))
	notifytest.WaitFor(t, 10*time.Second, "the hung request", func() bool { return len(hook.All()) >= 1 })
	notifytest.Publish(t, b, incident("home", "home-fire", alert.Critical))
	notifytest.WaitFor(t, 10*time.Second, "the other page", func() bool { _, ok := accepted("home-fire"); return ok })

	stopRestarted := notifytest.RunNotifiers(t, b, cfg, opts)
	defer stopRestarted()
	time.Sleep(500 * time.Millisecond) // it has read the consumer's pending messages
	close(release)
	notifytest.WaitFor(t, 10*time.Second, "the hung page", func() bool { _, ok := accepted("tank-fire"); return ok })
	stopPeer() // what comes now is the restarted process's

	start := time.Now()
	notifytest.Publish(t, b, incident("home", "home-resolved", ""))
	notifytest.Publish(t, b, incident("tank", "tank-resolved", ""))
	notifytest.WaitFor(t, 30*time.Second, "both resolved notices", func() bool {
		_, a := accepted("home-resolved")
		_, b := accepted("tank-resolved")
		return a && b
	})
	for _, id := range []string{"home-resolved", "tank-resolved"} {
		a, _ := accepted(id)
		if took := a.Sub(start); took > 3*time.Second {
			t.Errorf("%s took %s: it waited for a message the peer had acknowledged", id, took.Round(time.Millisecond))
		}
	}
	// The peer may be stopped between the hook accepting the hung page and
	// the peer reading that answer: then it hands the page back and the
	// restarted process sends it again, the outbox's documented
	// at-most-one repeat. Anything else is sent once.
	seen := map[string]int{}
	for _, h := range hook.All() {
		seen[fmt.Sprint(h.JSON(t)["id"])]++
	}
	for _, id := range []string{"tank-fire", "home-fire", "home-resolved", "tank-resolved"} {
		most := 1
		if id == "tank-fire" {
			most = 2
		}
		if n := seen[id]; n < 1 || n > most {
			t.Errorf("%s sent %d times (all requests: %v)", id, n, seen)
		}
	}
	if len(seen) != 4 {
		t.Errorf("requests for %d notifications, want 4: %v", len(seen), seen)
	}
}

// TestOutboxBacklogFetchedInFewPulls: 200 notifications wait in the outbox
// when the channel starts (a burst of a fleet's pages, or a backlog after
// a restart). Each pull asks for a batch, so they arrive in a few round
// trips to the bus, not one each, and every one is delivered once.
func TestOutboxBacklogFetchedInFewPulls(t *testing.T) {
	f := startFlaky(t)
	cfg := notifytest.NotifyConfig(hookTo("hook", f.URL))
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	const backlog = 200
	for i := range backlog {
		notifytest.Publish(t, b, incident(fmt.Sprint("pool", i), fmt.Sprint("page-", i), alert.Critical))
	}
	// The pulls the server answers, seen as any subscriber sees them.
	var pulls atomic.Int64
	sub, err := b.NC.Subscribe("$JS.API.CONSUMER.MSG.NEXT."+bus.StreamAlerts+".>", func(*nats.Msg) { pulls.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := b.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	notifytest.RunNotifiers(t, b, cfg, delivery.Options{})
	notifytest.WaitFor(t, 30*time.Second, "every notification", func() bool { return len(f.got()) >= backlog })
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond) // room for a duplicate to show up
	got := f.got()
	slices.Sort(got)
	if n := len(slices.Compact(got)); n != backlog || len(f.got()) != backlog {
		t.Errorf("%d notifications accepted, %d of them distinct: want each of %d once", len(f.got()), n, backlog)
	}
	t.Logf("%d notifications delivered in %v with %d pulls", backlog, took.Round(time.Millisecond), pulls.Load())
	if n := pulls.Load(); n > backlog/10 {
		t.Errorf("%d pulls for %d notifications: want a few, each for a batch", n, backlog)
	}
}
