package signal

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/internal/answertest"
)

const (
	botNumber = "+4915112345678"
	alice     = "+4917612345678"
	pageTS    = "1796612990123"
)

// restAPI is a fake signal-cli REST API: /v2/send answers with the sent
// timestamp; the first receive returns testdata/receive-answers.json, the
// next ones nothing.
type restAPI struct {
	t        *testing.T
	mu       sync.Mutex
	sent     []map[string]any
	receives int
}

func (a *restAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v2/send":
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		a.sent = append(a.sent, m)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"timestamp":"`+pageTS+`"}`)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/receive/"+botNumber:
		a.receives++
		if a.receives > 1 {
			_, _ = io.WriteString(w, `[]`)
			return
		}
		b, err := os.ReadFile("testdata/receive-answers.json")
		if err != nil {
			a.t.Error(err)
		}
		_, _ = w.Write([]byte(strings.ReplaceAll(string(b), "PAGE_TS", pageTS)))
	default:
		a.t.Errorf("unexpected %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusNotFound)
	}
}

// A page of a channel with answer_numbers says how to answer; a listed
// number's reply "ack" to the page acknowledges its incident, "snooze
// 3f2a9c1e" snoozes it, and each gets a reply; a reaction from a number not
// listed, a typing indicator and a message that is no answer do nothing.
func TestSignalAnswers(t *testing.T) {
	api := &restAPI{t: t}
	srv := httptest.NewServer(http.HandlerFunc(api.serve))
	defer srv.Close()
	s := New(Config{URL: srv.URL, Number: botNumber, Recipients: []string{alice}, AnswerNumbers: []string{alice}}, channel.Env{HTTP: srv.Client()})
	s.poll = 20 * time.Millisecond
	if !s.EnableAnswers(nil, "phone") {
		t.Fatal("answer_numbers set: pages must be answerable")
	}
	m := channel.Message{Text: "[CRITICAL] vault DEGRADED\n\ndetails", Severity: alert.Critical,
		Notification: alert.Notification{Alerts: []alert.Alert{{Name: "VdevState", Incident: "3f2a9c1e"}}}}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if msg, _ := api.sent[0]["message"].(string); !strings.HasPrefix(msg, "[CRITICAL] vault DEGRADED\n"+answerHintLine+" Incident 3f2a9c1e.\n") {
		t.Fatalf("page text %q", msg)
	}
	var rec answertest.Recorder
	answertest.Run(t, s.Answers, &rec, func() bool {
		api.mu.Lock()
		defer api.mu.Unlock()
		return api.receives >= 3
	})
	got := rec.Got()
	want := []string{"ack 3f2a9c1e Alice (+4917612345678) signal:phone", "snooze 3f2a9c1e Alice (+4917612345678) signal:phone"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("answers %q, want %q", got, want)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	var replies []string
	for _, m := range api.sent[1:] {
		if rs, _ := m["recipients"].([]any); len(rs) != 1 || rs[0] != alice {
			t.Errorf("reply to %v, want only %s", m["recipients"], alice)
		}
		replies = append(replies, m["message"].(string))
	}
	if len(replies) != 2 || !strings.HasPrefix(replies[0], "✅ Incident 3f2a9c1e acknowledged") || !strings.HasPrefix(replies[1], "💤 Incident 3f2a9c1e snoozed until") {
		t.Errorf("replies %q", replies)
	}
}

// After a restart the page log is empty: a reply quoting a page is read by
// the incident ID its quoted text names; a bare "ack" asks which incident.
func TestSignalAnswerInQuotedText(t *testing.T) {
	s := New(Config{URL: "http://127.0.0.1:1", Number: botNumber, Recipients: []string{alice}, AnswerNumbers: []string{alice}}, channel.Env{})
	var e envelope
	if err := json.Unmarshal([]byte(`{"envelope":{"sourceNumber":"`+alice+`","dataMessage":{"message":"Ack","quote":{"id":1,"text":"[WARNING] x\n`+answerHintLine+` Incident 77aa00bb.\nmore"}}}}`), &e); err != nil {
		t.Fatal(err)
	}
	if verb, id := s.answerIn(e); verb != answer.Ack || id != "77aa00bb" {
		t.Errorf("answerIn = %q %q", verb, id)
	}
	var bare envelope
	_ = json.Unmarshal([]byte(`{"envelope":{"sourceNumber":"`+alice+`","dataMessage":{"message":"snooze"}}}`), &bare)
	if verb, id := s.answerIn(bare); verb != answer.Snooze || id != "" {
		t.Errorf("bare snooze = %q %q", verb, id)
	}
}

func TestSignalAnswerNumbersValidate(t *testing.T) {
	var errs config.Errors
	Config{URL: "http://127.0.0.1:8080", Number: botNumber, Recipients: []string{alice}, AnswerNumbers: []string{"0176 12345678"}}.Validate("c", &errs)
	if !strings.Contains(errs.Error(), `c.answer_numbers[0] = "0176 12345678"`) {
		t.Errorf("errors %v", errs)
	}
}

func FuzzAnswerIn(f *testing.F) {
	b, _ := os.ReadFile("testdata/receive-answers.json")
	var envs []json.RawMessage
	_ = json.Unmarshal([]byte(strings.ReplaceAll(string(b), "PAGE_TS", pageTS)), &envs)
	for _, e := range envs {
		f.Add(string(e))
	}
	s := New(Config{URL: "http://127.0.0.1:1", Number: botNumber, Recipients: []string{alice}, AnswerNumbers: []string{alice}}, channel.Env{})
	f.Fuzz(func(t *testing.T, raw string) {
		var e envelope
		if json.Unmarshal([]byte(raw), &e) != nil {
			return
		}
		verb, id := s.answerIn(e)
		if verb != "" && verb != answer.Ack && verb != answer.Snooze {
			t.Errorf("verb %q", verb)
		}
		if id != "" && (len(id) != 8 || strings.Trim(id, "0123456789abcdef") != "") {
			t.Errorf("incident %q", id)
		}
	})
}
