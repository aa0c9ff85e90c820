package pushover

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// fakePushover serves the message and receipts APIs as documented
// (testdata/SOURCES.md): each priority-2 message gets a receipt of its
// own; a receipt reads pending until the test acknowledges it.
type fakePushover struct {
	t        *testing.T
	mu       sync.Mutex
	forms    []url.Values
	receipts []string
	acked    map[string]bool
	polled   map[string]int
	canceled []string
}

func startFake(t *testing.T) (*fakePushover, *httptest.Server) {
	f := &fakePushover{t: t, acked: map[string]bool{}, polled: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func testdata(t *testing.T, name string) string {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (f *fakePushover) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/1/messages.json":
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		f.forms = append(f.forms, form)
		if form.Get("priority") != "2" {
			fmt.Fprint(w, `{"status":1,"request":"6d5c4c5e-9f1e-4a49-9d0b-1b0b1b4f1f50"}`)
			return
		}
		id := fmt.Sprintf("rLqVuqTRh62UzxtmqiaLzQmVcPgi%02d", len(f.receipts))
		f.receipts = append(f.receipts, id)
		fmt.Fprint(w, strings.Replace(testdata(f.t, "messages-emergency.json"), "rLqVuqTRh62UzxtmqiaLzQmVcPgiCy", id, 1))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/1/receipts/") && strings.HasSuffix(r.URL.Path, ".json"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/1/receipts/"), ".json")
		if r.URL.Query().Get("token") != "azGDORePK8gMaC0QOYAMyEEuzJnyUi" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"token":"invalid","errors":["application token is invalid"],"status":0}`)
			return
		}
		f.polled[id]++
		if f.acked[id] {
			fmt.Fprint(w, testdata(f.t, "receipt-acknowledged.json"))
		} else {
			fmt.Fprint(w, testdata(f.t, "receipt-pending.json"))
		}
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/cancel.json"):
		body, _ := io.ReadAll(r.Body)
		if form, _ := url.ParseQuery(string(body)); form.Get("token") != "azGDORePK8gMaC0QOYAMyEEuzJnyUi" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.canceled = append(f.canceled, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/1/receipts/"), "/cancel.json"))
		fmt.Fprint(w, testdata(f.t, "receipt-cancel.json"))
	default:
		f.t.Errorf("unexpected %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusNotFound)
	}
}

func (f *fakePushover) state() (forms []url.Values, receipts, canceled []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]url.Values(nil), f.forms...), append([]string(nil), f.receipts...), append([]string(nil), f.canceled...)
}

func page(incident string, sev alert.Severity, resolved bool) channel.Message {
	return channel.Message{Title: "zwatch nas1: " + strings.ToUpper(string(sev)), Text: "[" + strings.ToUpper(string(sev)) + "] vault DEGRADED", Severity: sev, Resolved: resolved,
		Notification: alert.Notification{Alerts: []alert.Alert{{Name: "VdevState", Severity: sev, Incident: incident}}}}
}

func emergencySender(srv *httptest.Server) *Sender {
	s := New(Config{APIURL: srv.URL + "/1/messages.json", Token: config.Secret{Value: "azGDORePK8gMaC0QOYAMyEEuzJnyUi"},
		User:      config.Secret{Value: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"},
		Emergency: &Emergency{Retry: config.Duration(time.Minute), Expire: config.Duration(time.Hour)}}, channel.Env{HTTP: srv.Client()})
	s.poll = 20 * time.Millisecond
	return s
}

type answered struct {
	act       answer.Action
	by, where string
}

// A critical page goes at emergency priority with retry and expire; its
// repeat gets a receipt of its own. Acknowledged in the app, the receipt
// acknowledges the incident once, from the device that did, and the
// incident's other emergency page stops ringing. Warnings, resolved
// notices and test pages never ring as emergencies.
func TestPushoverEmergencyAcknowledgedInTheApp(t *testing.T) {
	f, srv := startFake(t)
	s := emergencySender(srv)
	if !s.EnableAnswers(nil, "phone") {
		t.Fatal("emergency set: pages must be answerable")
	}
	ctx := context.Background()
	for _, m := range []channel.Message{page("3f2a9c1e", alert.Critical, false), page("3f2a9c1e", alert.Critical, false), page("77aa00bb", alert.Warning, false)} {
		if err := s.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	test := page("99aa00bb", alert.Critical, false)
	test.Test = true
	if err := s.Send(ctx, test); err != nil {
		t.Fatal(err)
	}
	forms, receipts, _ := f.state()
	for i, want := range []string{"2", "2", "0", "1"} {
		if got := forms[i].Get("priority"); got != want {
			t.Errorf("message %d: priority %q, want %s", i, got, want)
		}
	}
	if forms[0].Get("retry") != "60" || forms[0].Get("expire") != "3600" {
		t.Errorf("retry %q expire %q, want 60 and 3600", forms[0].Get("retry"), forms[0].Get("expire"))
	}
	if forms[2].Get("retry") != "" {
		t.Error("a warning carries retry")
	}
	if len(receipts) != 2 {
		t.Fatalf("receipts %v, want two", receipts)
	}

	var mu sync.Mutex
	var got []answered
	do := func(_ context.Context, act answer.Action, by, where string) (answer.Outcome, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, answered{act, by, where})
		return answer.Outcome{Host: "nas1", Alerts: 3}, nil
	}
	actx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Answers(actx, do, slog.New(slog.DiscardHandler)) }()
	time.Sleep(100 * time.Millisecond) // polled while pending: nothing happens
	mu.Lock()
	if len(got) != 0 {
		t.Errorf("answered %v while nobody acknowledged", got)
	}
	mu.Unlock()
	f.mu.Lock()
	f.acked[receipts[0]] = true
	f.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // room for a second answer
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := answered{answer.Action{Verb: answer.Ack, Incident: "3f2a9c1e"}, "pushover device iphone", "pushover:phone"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("answers %+v, want one %+v", got, want)
	}
	_, _, canceled := f.state()
	if !containsAll(canceled, receipts) {
		t.Errorf("canceled %v, want the incident's receipts %v", canceled, receipts)
	}
	if len(s.receipts.snapshot()) != 0 {
		t.Errorf("receipts still polled: %v", s.receipts.snapshot())
	}
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// The resolved notice stops the incident's emergency repeats first, and
// goes quietly itself.
func TestPushoverEmergencyEndsWithTheIncident(t *testing.T) {
	f, srv := startFake(t)
	s := emergencySender(srv)
	ctx := context.Background()
	if err := s.Send(ctx, page("3f2a9c1e", alert.Critical, false)); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(ctx, page("3f2a9c1e", alert.Critical, true)); err != nil {
		t.Fatal(err)
	}
	forms, receipts, canceled := f.state()
	if len(receipts) != 1 || len(canceled) != 1 || canceled[0] != receipts[0] {
		t.Errorf("receipts %v canceled %v: want the page's receipt canceled", receipts, canceled)
	}
	if got := forms[1].Get("priority"); got != "-1" {
		t.Errorf("resolved notice at priority %q, want -1", got)
	}
}

func TestPushoverEmergencyValidate(t *testing.T) {
	for _, c := range []struct {
		e    Emergency
		api  string
		want string
	}{
		{Emergency{config.Duration(10 * time.Second), config.Duration(time.Hour)}, "", "emergency.retry = \"10s\": must be at least 30s"},
		{Emergency{config.Duration(time.Minute), config.Duration(4 * time.Hour)}, "", "emergency.expire = \"4h\": must be at most 3h"},
		{Emergency{config.Duration(time.Minute), config.Duration(30 * time.Second)}, "", "must be at least retry (1m)"},
		{Emergency{config.Duration(time.Minute), config.Duration(time.Hour)}, "https://proxy.example/push", "needs an api_url that ends in /messages.json"},
	} {
		var errs config.Errors
		Config{Token: config.Secret{Value: "t"}, User: config.Secret{Value: "u"}, APIURL: c.api, Emergency: &c.e}.Validate("notify.channels[0]", &errs)
		if len(errs) == 0 || !strings.Contains(errs.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.e, errs, c.want)
		}
	}
	var errs config.Errors
	two := 2
	Config{Token: config.Secret{Value: "t"}, User: config.Secret{Value: "u"}, Priority: &two}.Validate("p", &errs)
	if !strings.Contains(errs.Error(), "set emergency: {retry: 1m, expire: 1h}") {
		t.Errorf("priority 2: %v", errs)
	}
	var ok config.Errors
	Config{Token: config.Secret{Value: "t"}, User: config.Secret{Value: "u"}, Emergency: &Emergency{config.Duration(time.Minute), config.Duration(time.Hour)}}.Validate("p", &ok)
	if len(ok) != 0 {
		t.Errorf("a good emergency: %v", ok)
	}
}

// Without emergency the channel carries no answer and polls nothing.
func TestPushoverWithoutEmergency(t *testing.T) {
	_, srv := startFake(t)
	s := New(Config{APIURL: srv.URL + "/1/messages.json", Token: config.Secret{Value: "t"}, User: config.Secret{Value: "u"}}, channel.Env{HTTP: srv.Client()})
	if s.EnableAnswers(nil, "phone") {
		t.Error("answerable without emergency")
	}
	if err := s.Answers(context.Background(), nil, slog.New(slog.DiscardHandler)); err != nil {
		t.Error(err)
	}
}

func FuzzValidReceipt(f *testing.F) {
	f.Add("rLqVuqTRh62UzxtmqiaLzQmVcPgiCy")
	f.Add("")
	f.Add("../../etc/passwd")
	f.Fuzz(func(t *testing.T, s string) {
		if validReceipt(s) && (len(s) != 30 || strings.ContainsAny(s, "/.?#%")) {
			t.Errorf("%q taken for a receipt", s)
		}
	})
}
