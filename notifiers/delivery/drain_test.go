package delivery_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// TestOutboxDrainsAfterSMTPOutage: the mail server is down while three
// incidents page (at 0, 3 and 6 s) and resolve (at 8, 10 and 12 s), and
// comes back at 14 s. With retry_initial 1s each page's own schedule would
// next try it at 15, 18 and 21 s; the channel's probe, whose backoff started
// again with the last notice (probes at 13 and 15 s), passes at 15 s and
// all six mails follow it at once, each incident in order, each mail once.
func TestOutboxDrainsAfterSMTPOutage(t *testing.T) {
	cert := notifytest.NewCert(t)
	port := notifytest.FreePort(t)
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	cfg := notifytest.NotifyConfig(notifytest.EmailChannel("ops-mail", port, "starttls", "nas1", "pw", cert.CAFile, "ops@example.net"))
	cfg.RetryInitial = config.Duration(time.Second)
	cfg.RetryMax = config.Duration(time.Minute)
	cfg.SendTimeout = config.Duration(3 * time.Second)
	stop := notifytest.RunNotifiers(t, b, cfg, delivery.Options{})
	defer stop()

	start := time.Now()
	at := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }
	groups := []string{"tank", "home", "backup"}
	for i, g := range groups {
		at(time.Duration(3*i) * time.Second)
		notifytest.Publish(t, b, incident(g, g+"-fire", alert.Critical))
	}
	for i, g := range groups {
		at(time.Duration(8+2*i) * time.Second)
		notifytest.Publish(t, b, incident(g, g+"-resolved", ""))
	}
	at(14 * time.Second)
	back := time.Now()
	sink := notifytest.StartSMTP(t, notifytest.SinkStartTLS, &cert, "nas1", "pw", fmt.Sprintf("127.0.0.1:%d", port))

	notifytest.WaitFor(t, 30*time.Second, "all six mails", func() bool { return len(sink.All()) >= 6 })
	time.Sleep(time.Second) // room for a wrong duplicate to show up
	stop()
	mails := sink.All()
	var order []string
	for _, m := range mails {
		order = append(order, notifytest.ParseMail(t, m.Data).Header.Get("X-Zwatch-Notification"))
	}
	first, last := mails[0].At.Sub(back), mails[len(mails)-1].At.Sub(back)
	t.Logf("server back at %s; mails %s..%s after it: %v", back.Sub(start).Round(time.Millisecond),
		first.Round(time.Millisecond), last.Round(time.Millisecond), order)
	if len(mails) != 6 {
		t.Errorf("%d mails, want each of the 6 once: %v", len(mails), order)
	}
	for _, g := range groups {
		i, j := slices.Index(order, g+"-fire"), slices.Index(order, g+"-resolved")
		if i < 0 || j < 0 || i > j {
			t.Errorf("mails %v: want %s-fire before %s-resolved", order, g, g)
		}
	}
	// The probe is due 1 s after the return and the rest follow it at once
	// (each page's own schedule: the last 7 s after, 6 s after the first);
	// the bounds leave room for a loaded machine.
	if last > 5*time.Second {
		t.Errorf("the last mail came %s after the server was back, want within 5s", last.Round(time.Millisecond))
	}
	if spread := last - first; spread > 2500*time.Millisecond {
		t.Errorf("the backlog took %s to drain after the first mail, want it at once", spread.Round(time.Millisecond))
	}
}

// TestOutboxProbeChecksTheMailServer: the mail server is up but refuses
// every mail (451 after DATA) while three mails wait. The channel's probe
// checks the server (it answers), then tries one mail; the others are not
// sent to be refused with it. Once the server takes mail, all arrive once.
func TestOutboxProbeChecksTheMailServer(t *testing.T) {
	cert := notifytest.NewCert(t)
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	sink := notifytest.StartSMTP(t, notifytest.SinkStartTLS, &cert, "nas1", "pw", "")
	var mu sync.Mutex
	refused, refusing := 0, true
	sink.Reject(func() error {
		mu.Lock()
		defer mu.Unlock()
		if refusing {
			refused++
			return notifytest.ErrUnavailable
		}
		return nil
	})
	cfg := notifytest.NotifyConfig(notifytest.EmailChannel("ops-mail", sink.Port, "starttls", "nas1", "pw", cert.CAFile, "ops@example.net"))
	cfg.RetryInitial = config.Duration(200 * time.Millisecond)
	cfg.RetryMax = config.Duration(400 * time.Millisecond)
	stop := notifytest.RunNotifiers(t, b, cfg, delivery.Options{})
	defer stop()
	for _, g := range []string{"tank", "home", "backup"} {
		notifytest.Publish(t, b, incident(g, g+"-fire", alert.Critical))
	}
	notifytest.WaitFor(t, 10*time.Second, "the three first attempts", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return refused >= 3
	})
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	refused0, conns0 := refused, sink.Connections()
	mu.Unlock()
	time.Sleep(3 * time.Second) // probes every 400ms: about 7
	mu.Lock()
	probes, conns := refused-refused0, sink.Connections()-conns0
	refusing = false
	mu.Unlock()
	t.Logf("in 3s of refusals: %d mails tried, %d connections", probes, conns)
	if probes < 2 || probes > 10 {
		t.Errorf("%d mails tried in 3s while the server refused: want one per probe (400ms apart), not every queued mail each time", probes)
	}
	// Each probe is a check (a connection of its own) and then one mail.
	if conns < 2*probes-1 || conns > 2*probes+2 {
		t.Errorf("%d connections for %d probes, want a check and a mail each", conns, probes)
	}
	notifytest.WaitFor(t, 10*time.Second, "the three mails", func() bool { return len(sink.All()) >= 3 })
	time.Sleep(500 * time.Millisecond)
	stop()
	for id, n := range mailIDs(t, sink) {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
}

// hangingHook is a webhook that holds the requests of chosen notifications
// until the sender gives up (a hung service), and counts how many of those
// are in flight at once.
type hangingHook struct {
	*notifytest.HTTPSink
	mu          sync.Mutex
	hang        map[string]bool
	released    chan struct{}
	inFlight    int
	maxInFlight int
	tries       map[string]int
	accepted    map[string]time.Time
	order       []string
}

func startHangingHook(t *testing.T) *hangingHook {
	h := &hangingHook{HTTPSink: notifytest.StartHTTP(t, ""), hang: map[string]bool{}, released: make(chan struct{}),
		tries: map[string]int{}, accepted: map[string]time.Time{}}
	h.Answer(func(w http.ResponseWriter, hit notifytest.Hit) {
		id := fmt.Sprint(hit.JSON(t)["id"])
		h.mu.Lock()
		h.tries[id]++
		hang := h.hang[id]
		if hang {
			h.inFlight++
			h.maxInFlight = max(h.maxInFlight, h.inFlight)
		}
		h.mu.Unlock()
		if hang {
			select {
			case <-hit.Context.Done(): // the sender gave up
				h.mu.Lock()
				h.inFlight--
				h.mu.Unlock()
				return
			case <-h.released:
				h.mu.Lock()
				h.inFlight--
				h.mu.Unlock()
			}
		}
		h.mu.Lock()
		h.accepted[id] = time.Now()
		h.order = append(h.order, id)
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	return h
}

func (h *hangingHook) stats() (inFlight, maxInFlight int, tries map[string]int, order []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tries = map[string]int{}
	for k, v := range h.tries {
		tries[k] = v
	}
	return h.inFlight, h.maxInFlight, tries, slices.Clone(h.order)
}

// TestOutboxNewPageNotHeldByAHungService: a webhook hangs on ten older
// incidents' pages until send_timeout. At most 8 first attempts are in
// flight; once they have failed, the channel asks again with one probe at
// a time. A new CRITICAL goes out at once all the same, and its success
// sends the backlog again, at most 4 at a time. When the webhook answers
// again the backlog follows, every notification once.
func TestOutboxNewPageNotHeldByAHungService(t *testing.T) {
	h := startHangingHook(t)
	var old []string
	for i := range 10 {
		id := fmt.Sprintf("old-%d", i)
		old = append(old, id)
		h.hang[id] = true
	}
	cfg := notifytest.NotifyConfig(hookTo("hook", h.URL))
	cfg.RetryInitial = config.Duration(500 * time.Millisecond)
	cfg.RetryMax = config.Duration(time.Minute)
	cfg.SendTimeout = config.Duration(2 * time.Second)
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	stop := notifytest.RunNotifiers(t, b, cfg, delivery.Options{})
	defer stop()
	for i, id := range old {
		notifytest.Publish(t, b, incident(fmt.Sprintf("pool%d", i), id, alert.Warning))
	}
	notifytest.WaitFor(t, 10*time.Second, "the hung first attempts", func() bool {
		_, _, tries, _ := h.stats()
		return len(tries) >= 8
	})
	// send_timeout ends them; from then on the channel fails.
	notifytest.WaitFor(t, 10*time.Second, "the first attempts to time out", func() bool {
		n, _, _, _ := h.stats()
		return n <= 1
	})
	mark := func() (maxIn, tries int) {
		h.mu.Lock()
		defer h.mu.Unlock()
		maxIn, h.maxInFlight = h.maxInFlight, h.inFlight
		for _, id := range old {
			tries += h.tries[id]
		}
		return maxIn, tries
	}
	firstMax, tries0 := mark()
	time.Sleep(3 * time.Second) // probes at +0.5s, then 1s after each 2s hang
	probeMax, tries1 := mark()
	t.Logf("first attempts: at most %d in flight; then in 3s %d probe(s), at most %d in flight", firstMax, tries1-tries0, probeMax)
	if firstMax > 8 {
		t.Errorf("%d first attempts in flight at once, want at most 8", firstMax)
	}
	if probeMax > 1 || tries1-tries0 < 1 || tries1-tries0 > 3 {
		t.Errorf("%d requests of the backlog in 3s, %d at once: want one probe at a time on the backoff", tries1-tries0, probeMax)
	}

	start := time.Now()
	notifytest.Publish(t, b, incident("vault", "new-crit", alert.Critical))
	notifytest.WaitFor(t, 10*time.Second, "the new critical", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		_, ok := h.accepted["new-crit"]
		return ok
	})
	h.mu.Lock()
	took := h.accepted["new-crit"].Sub(start)
	h.mu.Unlock()
	if took > time.Second {
		t.Errorf("the new critical took %s behind the hung service", took.Round(time.Millisecond))
	}
	time.Sleep(2500 * time.Millisecond) // its success sent the backlog again: it hangs
	drainMax, _ := mark()
	t.Logf("new critical after %s; the backlog it released: at most %d in flight", took.Round(time.Millisecond), drainMax)
	if drainMax > 4 {
		t.Errorf("%d retries in flight at once to the hung service, want at most 4", drainMax)
	}

	released := time.Now()
	close(h.released)
	notifytest.WaitFor(t, 30*time.Second, "the backlog", func() bool {
		_, _, _, order := h.stats()
		return len(order) >= 11
	})
	time.Sleep(500 * time.Millisecond)
	stop()
	_, _, _, order := h.stats()
	h.mu.Lock()
	var lastOld time.Time
	for _, id := range old {
		lastOld = later(lastOld, h.accepted[id])
	}
	h.mu.Unlock()
	t.Logf("webhook answers again; the last of the backlog after %s: %v", lastOld.Sub(released).Round(time.Millisecond), order)
	if len(order) != 11 {
		t.Errorf("accepted %v: want each of the 11 notifications once", order)
	}
	// The probe in flight or the next (at most the 4s backoff by then)
	// carries the recovery; the backlog follows it.
	if d := lastOld.Sub(released); d > 6*time.Second {
		t.Errorf("the backlog took %s after the webhook answered again", d.Round(time.Millisecond))
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
