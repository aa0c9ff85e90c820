package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/rules/runner"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// Secrets the fixture's config holds; no response may contain any of them.
const (
	pushoverToken = "azGDORePK8gMaC0QOYAMyEEuzJnyUi"
	pushoverUser  = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"
	hookKey       = "HookKeyInTheURL7731"
	hookBearer    = "BearerHeaderSecret9902"
	smtpPassword  = "SmtpPassword-5510"
	loginName     = "admin"
	loginPassword = "correct horse battery"
)

// fixture is a real embedded bus carrying the facts of the recorded b1
// capture (pool vault DEGRADED, one disk OFFLINE) for host nas1, judged by
// the real rule engine, with notifications going out through the real
// outbox: a webhook that refuses (a dead letter) and the console.
type fixture struct {
	bus     *bus.Bus
	cfg     *config.Config
	view    *statusview.Reader
	history *history.Store // nil: history off
	hash    string
	secrets []string
}

// With withHistory the real history store runs too, with earlier readings
// replayed into it.
func newFixture(t testing.TB, ctx context.Context, withHistory bool) *fixture {
	t.Helper()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad request", http.StatusBadRequest)
	}))
	t.Cleanup(refuse.Close)
	hash, err := bcrypt.GenerateFromPassword([]byte(loginPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	l, err := config.Parse(strings.NewReader(fmt.Sprintf(`
host: nas1
notify:
  console: true
  retry_for: 1s
  channels:
    - {name: phone, type: pushover, token: %s, user: %s}
    - {name: hook, type: webhook, url: "%s/hook?key=%s", headers: {Authorization: "Bearer %s"}}
    - name: mail
      type: email
      smtp: {host: 127.0.0.1, port: 1, username: nas1, password: "%s"}
      from: zwatch@example.net
      to: [ops@example.net]
http:
  listen: 127.0.0.1:0
  users:
    - {name: %s, password_hash: '%s'}
`, pushoverToken, pushoverUser, refuse.URL, hookKey, hookBearer, smtpPassword, loginName, hash)), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	cfg := &l.Config
	b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	log := slog.New(slog.DiscardHandler)
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = runner.RunWith(rctx, b, cfg.Rules, runner.Options{}, log) })
	wg.Go(func() { _ = delivery.Run(rctx, b, cfg.Notify, delivery.Options{}, log) })
	t.Cleanup(func() { stop(); wg.Wait() })
	var store *history.Store
	if withHistory {
		store = startHistory(t, ctx, b, "nas1")
	}
	viewtest.Publish(ctx, t, b, "nas1", "b1-offline")
	f := &fixture{bus: b, cfg: cfg, view: statusview.New(b, cfg), history: store, hash: string(hash),
		secrets: []string{pushoverToken, pushoverUser, hookKey, hookBearer, smtpPassword, string(hash), loginPassword}}
	return f
}

// waitFor polls the view until ok holds or the context ends.
func (f *fixture) waitFor(t testing.TB, ctx context.Context, what string, ok func(statusview.Host) bool) statusview.Host {
	t.Helper()
	for {
		h, err := f.view.Host(ctx, "nas1")
		if err == nil && ok(h) {
			return h
		}
		if ctx.Err() != nil {
			t.Fatalf("waiting for %s: %v (view %+v)", what, err, h)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settled waits for the alert of the offline disk and a dead letter.
func (f *fixture) settled(t testing.TB, ctx context.Context) statusview.Host {
	t.Helper()
	return f.waitFor(t, ctx, "an alert and a dead letter", func(h statusview.Host) bool {
		return len(h.Alerts) > 0 && len(h.DeadLetters) > 0 && len(h.Recent) > 0
	})
}
