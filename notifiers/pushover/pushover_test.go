package pushover_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/pushover"
)

func channelTo(api, token, user string) config.ChannelConfig {
	return config.ChannelConfig{Name: "phone", Type: "pushover", Settings: pushover.Config{APIURL: api,
		Token: config.Secret{Value: token}, User: config.Secret{Value: user}}}
}

func TestPushoverRequest(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"status":1,"request":"abc"}`)
	cc := channelTo(s.URL+"/1/messages.json", "azGDORePK8gMaC0QOYAMyEEuzJnyUi", "uQiRzpo4DXghDmr9QzzfQu27cmVRsG")
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "p-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != "/1/messages.json" {
		t.Errorf("%s %s", h.Method, h.Path)
	}
	if ct := h.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q", ct)
	}
	f, err := url.ParseQuery(string(h.Body))
	if err != nil {
		t.Fatal(err)
	}
	if f.Get("token") != "azGDORePK8gMaC0QOYAMyEEuzJnyUi" || f.Get("user") != "uQiRzpo4DXghDmr9QzzfQu27cmVRsG" {
		t.Errorf("token/user %q/%q", f.Get("token"), f.Get("user"))
	}
	if f.Get("priority") != "1" {
		t.Errorf("priority %q, want 1 for critical", f.Get("priority"))
	}
	if f.Get("title") != "zwatch nas1: CRITICAL" {
		t.Errorf("title %q", f.Get("title"))
	}
	if first, _, _ := strings.Cut(f.Get("message"), "\n"); first != notifytest.WantSummary {
		t.Errorf("first line %q", first)
	}
	if n := utf8.RuneCountInString(f.Get("message")); n > 1024 {
		t.Errorf("message has %d characters, Pushover allows 1024", n)
	}
	if f.Get("timestamp") == "" {
		t.Error("no timestamp")
	}
}

func TestPushoverRefusalAndResolvedPriority(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"token":"invalid","errors":["application token is invalid"],"status":0}`)
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"token":"invalid","errors":["application token is invalid"],"status":0}`))
	})
	cc := channelTo(s.URL, "badtoken123", "user123")
	ch := notifytest.BuildOne(t, cc)
	err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "x")))
	if err == nil || !strings.Contains(err.Error(), "application token is invalid") {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), "badtoken123") {
		t.Errorf("error reveals the token: %v", err)
	}
	if fix := ch.Fix(err); !strings.Contains(fix, "pushover.net/apps") {
		t.Errorf("fix %q", fix)
	}

	ok := notifytest.StartHTTP(t, `{"status":1}`)
	cc = channelTo(ok.URL, "badtoken123", "user123")
	n := notifytest.Firing("nas1", "r")
	end := n.Alerts[0].StartsAt.Add(2 * time.Hour)
	n.Alerts[0].State, n.Alerts[0].EndsAt, n.Status = alert.Resolved, &end, alert.Resolved
	if err := notifytest.Send(t, cc, n); err != nil {
		t.Fatal(err)
	}
	f, _ := url.ParseQuery(string(notifytest.Only(t, ok).Body))
	if f.Get("priority") != "-1" || !strings.HasPrefix(f.Get("message"), "[RESOLVED] vault DEGRADED") {
		t.Errorf("resolved: priority %q message %q", f.Get("priority"), f.Get("message"))
	}
}
