package notifiers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
)

func fastRetry(cfg config.NotifyConfig) config.NotifyConfig {
	cfg.RetryInitial = config.Duration(100 * time.Millisecond)
	cfg.RetryMax = config.Duration(400 * time.Millisecond)
	cfg.SendTimeout = config.Duration(3 * time.Second)
	return cfg
}

// countIDs counts deliveries per notification id from mail Message-IDs.
func mailIDs(t *testing.T, sink *smtpSink) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range sink.all() {
		out[parseMail(t, r.Data).Header.Get("X-Zwatch-Notification")]++
	}
	return out
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOutboxSMTPOutage: the mail server is down, then answers 451, then
// accepts. Every alert arrives, exactly once.
func TestOutboxSMTPOutage(t *testing.T) {
	cert := newTestCert(t)
	port := freePort(t)
	b := openBus(t, t.TempDir())
	defer b.Close()
	cfg := fastRetry(notifyConfig(emailChannel(t, "ops-mail", port, "starttls", "nas1", "pw", cert.caFile, "ops@example.net")))
	stop := runNotifiers(t, b, cfg, Options{})

	const count = 5
	for i := range count {
		publish(t, b, firingNotification("nas1", fmt.Sprintf("outage-%d", i)))
	}
	time.Sleep(time.Second) // down: connection refused, several retries each

	sink := startSMTP(t, sinkStartTLS, &cert, "nas1", "pw", fmt.Sprintf("127.0.0.1:%d", port))
	var refusals atomic.Int32
	sink.mu.Lock()
	sink.reject = func() error {
		if refusals.Add(1) <= 4 {
			return errUnavailable // 451: up but refusing
		}
		return nil
	}
	sink.mu.Unlock()

	waitFor(t, 20*time.Second, "all mails", func() bool { return len(sink.all()) >= count })
	time.Sleep(1500 * time.Millisecond) // room for a wrong duplicate to show up
	stop()
	ids := mailIDs(t, sink)
	for i := range count {
		if got := ids[fmt.Sprintf("outage-%d", i)]; got != 1 {
			t.Errorf("outage-%d delivered %d times, want exactly 1", i, got)
		}
	}
	if len(sink.all()) != count {
		t.Errorf("%d mails for %d alerts", len(sink.all()), count)
	}
	if refusals.Load() < 4 {
		t.Errorf("server refused only %d times; the outage was not exercised", refusals.Load())
	}
}

// TestOutboxCrashRedelivers: the notifier dies after the service accepted a
// message but before the acknowledgement; after a restart on the same state
// dir every alert arrives at least once and at most twice.
func TestOutboxCrashRedelivers(t *testing.T) {
	dir := t.TempDir()
	s := startHTTP(t, "")
	release := make(chan struct{})
	var first sync.Once
	s.answer = func(w http.ResponseWriter, h hit) {
		s.record(h)
		blocked := false
		first.Do(func() { blocked = true })
		if blocked {
			<-release // accepted, but the answer comes only after the crash
		}
		w.WriteHeader(http.StatusOK)
	}
	cfg := fastRetry(notifyConfig(config.ChannelConfig{Name: "hook", Type: config.ChannelWebhook, URL: s.URL}))
	cfg.SendTimeout = config.Duration(20 * time.Second)
	opts := Options{AckWait: 2 * time.Second}

	b := openBus(t, dir)
	const count = 3
	for i := range count {
		publish(t, b, firingNotification("nas1", fmt.Sprintf("crash-%d", i)))
	}
	stop := runNotifiers(t, b, cfg, opts)
	<-s.got // the first send reached the service and hangs there

	// "kill -9": the connection goes away without an ack, then the server.
	b.NC.Close()
	b.Close()
	close(release)
	stop()

	b2 := openBus(t, dir)
	defer b2.Close()
	runNotifiers(t, b2, cfg, opts)
	per := func() map[string]int {
		m := map[string]int{}
		for _, h := range s.all() {
			m[fmt.Sprint(h.json(t)["id"])]++
		}
		return m
	}
	waitFor(t, 30*time.Second, "all alerts after restart", func() bool {
		p := per()
		for i := range count {
			if p[fmt.Sprintf("crash-%d", i)] == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second) // past AckWait: any further redelivery would show
	for i := range count {
		id := fmt.Sprintf("crash-%d", i)
		if got := per()[id]; got < 1 || got > 2 {
			t.Errorf("%s delivered %d times, want 1 or 2", id, got)
		}
	}
	if got := per()["crash-0"]; got != 2 {
		t.Logf("crash-0 delivered %d times (the unacknowledged one is expected twice)", got)
	}
}

// TestOutboxDeadLetter: a channel that never succeeds gives up after
// retry_for, stores the notification, and the other channel reports it.
func TestOutboxDeadLetter(t *testing.T) {
	broken := startHTTP(t, "")
	broken.answer = func(w http.ResponseWriter, h hit) {
		broken.record(h)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"database on fire"}`))
	}
	good := startHTTP(t, "")
	cfg := fastRetry(notifyConfig(
		config.ChannelConfig{Name: "broken", Type: config.ChannelWebhook, URL: broken.URL},
		config.ChannelConfig{Name: "good", Type: config.ChannelWebhook, URL: good.URL},
	))
	cfg.RetryFor = config.Duration(1500 * time.Millisecond)
	b := openBus(t, t.TempDir())
	defer b.Close()
	runNotifiers(t, b, cfg, Options{})
	publish(t, b, firingNotification("nas1", "dl-1"))

	var report hit
	waitFor(t, 20*time.Second, "the dead-letter report on the good channel", func() bool {
		for _, h := range good.all() {
			if strings.HasPrefix(fmt.Sprint(h.json(t)["id"]), "deadletter-") {
				report = h
				return true
			}
		}
		return false
	})
	j := report.json(t)
	if j["severity"] != "warning" || !strings.Contains(fmt.Sprint(j["summary"]), "could not deliver to broken") {
		t.Errorf("report %v", j)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dls, err := DeadLetters(ctx, b.JS)
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 {
		t.Fatalf("%d dead letters, want 1: %+v", len(dls), dls)
	}
	dl := dls[0]
	if dl.Channel != "broken" || dl.Notification.ID != "dl-1" || dl.Attempts < 2 || !strings.Contains(dl.LastError, "database on fire") {
		t.Errorf("dead letter %+v", dl)
	}
	tries := len(broken.all())
	time.Sleep(time.Second)
	if len(broken.all()) != tries {
		t.Errorf("broken channel still retried after dead-lettering (%d → %d)", tries, len(broken.all()))
	}
	for _, h := range broken.all() {
		if strings.HasPrefix(fmt.Sprint(h.json(t)["id"]), "deadletter-") {
			t.Error("the broken channel was sent the report about itself")
		}
	}
	goodIDs := 0
	for _, h := range good.all() {
		if h.json(t)["id"] == "dl-1" {
			goodIDs++
		}
	}
	if goodIDs != 1 {
		t.Errorf("good channel got dl-1 %d times", goodIDs)
	}
}

// TestOutboxSlowChannelDoesNotBlockOthers: one channel hangs, the other
// delivers at once.
func TestOutboxSlowChannelDoesNotBlockOthers(t *testing.T) {
	slow := startHTTP(t, "")
	unblock := make(chan struct{})
	slow.answer = func(w http.ResponseWriter, h hit) {
		slow.record(h)
		<-unblock
	}
	defer close(unblock)
	fast := startHTTP(t, "")
	cfg := notifyConfig(
		config.ChannelConfig{Name: "slow", Type: config.ChannelWebhook, URL: slow.URL},
		config.ChannelConfig{Name: "fast", Type: config.ChannelWebhook, URL: fast.URL},
	)
	cfg.SendTimeout = config.Duration(30 * time.Second)
	cfg.Console = true
	b := openBus(t, t.TempDir())
	defer b.Close()
	runNotifiers(t, b, cfg, Options{})
	for i := range 3 {
		publish(t, b, firingNotification("nas1", fmt.Sprintf("s-%d", i)))
	}
	waitFor(t, 5*time.Second, "fast channel", func() bool { return len(fast.all()) == 3 })
	waitFor(t, 5*time.Second, "slow channel's first request", func() bool { return len(slow.all()) >= 1 })
	time.Sleep(200 * time.Millisecond)
	if n := len(slow.all()); n != 1 {
		t.Errorf("slow channel got %d requests while hanging on the first", n)
	}
}

func TestNotifyTestCommand(t *testing.T) {
	good := startHTTP(t, "")
	tg := startHTTP(t, "")
	tg.answer = func(w http.ResponseWriter, h hit) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"ok":false,"error_code":401,"description":"Unauthorized"}`))
	}
	cfg := notifyConfig(
		config.ChannelConfig{Name: "hook", Type: config.ChannelWebhook, URL: good.URL},
		config.ChannelConfig{Name: "tg", Type: config.ChannelTelegram, APIURL: tg.URL, Token: config.Secret{Value: "1:bad"}, ChatIDs: []string{"5"}},
	)
	res := Test(context.Background(), cfg, "", SampleNotification("nas1"))
	if len(res) != 2 {
		t.Fatalf("results %+v", res)
	}
	if !res[0].Delivered || res[0].Channel != "hook" {
		t.Errorf("hook %+v", res[0])
	}
	if res[1].Delivered || !strings.Contains(res[1].Err.Error(), "401") || !strings.Contains(res[1].Fix, "BotFather") {
		t.Errorf("tg %+v", res[1])
	}
	if j := good.all()[0].json(t); j["test"] != true {
		t.Errorf("test flag missing: %v", j)
	}
	res = Test(context.Background(), cfg, "hook", SampleNotification("nas1"))
	if len(res) != 1 || !res[0].Delivered {
		t.Errorf("named %+v", res)
	}
	res = Test(context.Background(), cfg, "nope", SampleNotification("nas1"))
	if len(res) != 1 || res[0].Err == nil || !strings.Contains(res[0].Fix, "hook, tg") {
		t.Errorf("unknown %+v", res)
	}
}
