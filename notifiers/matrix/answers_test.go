package matrix

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
	testRoom = "!726s6s6q:example.org"
	botUser  = "@zwatch:example.org"
)

// homeserver is a fake of the client-server API calls the answers use,
// answering with the specification's shapes (testdata/SOURCES.md).
type homeserver struct {
	t       *testing.T
	mu      sync.Mutex
	page    json.RawMessage // the content of the page zwatch sent
	syncs   int
	notices []string
}

func (h *homeserver) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer syt_token" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"errcode":"M_UNKNOWN_TOKEN","error":"Invalid access token passed."}`)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := r.URL.Path
	room := "/_matrix/client/v3/rooms/" + testRoom
	switch {
	case p == "/_matrix/client/v3/account/whoami":
		_, _ = io.WriteString(w, `{"user_id":"`+botUser+`","device_id":"ABCDEF"}`)
	case r.Method == http.MethodPut && strings.HasPrefix(p, room+"/send/m.room.message/"):
		body, _ := io.ReadAll(r.Body)
		var c map[string]any
		_ = json.Unmarshal(body, &c)
		if c["msgtype"] == "m.notice" {
			h.notices = append(h.notices, c["body"].(string))
			_, _ = io.WriteString(w, `{"event_id":"$notice`+string(rune('0'+len(h.notices)))+`:example.org"}`)
			return
		}
		h.page = body
		_, _ = io.WriteString(w, `{"event_id":"$page1:example.org"}`)
	case p == "/_matrix/client/v3/sync":
		h.syncs++
		switch {
		case r.URL.Query().Get("since") == "":
			_, _ = w.Write(h.file("sync-initial.json"))
		case h.syncs == 2:
			_, _ = w.Write(h.file("sync-answers.json"))
		default:
			_, _ = io.WriteString(w, `{"next_batch":"s72596_4483_1936"}`)
		}
	case p == room+"/event/$page1:example.org":
		_, _ = io.WriteString(w, `{"type":"m.room.message","event_id":"$page1:example.org","sender":"`+botUser+`","content":`+string(h.page)+`}`)
	case p == room+"/event/$not-a-page":
		// Another user's message that copies a page's signed answers.
		_, _ = io.WriteString(w, `{"type":"m.room.message","event_id":"$not-a-page","sender":"@mallory:example.org","content":`+string(h.page)+`}`)
	default:
		h.t.Errorf("unexpected %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusNotFound)
	}
}

func (h *homeserver) file(name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		h.t.Fatal(err)
	}
	return []byte(strings.NewReplacer("ROOM", testRoom, "PAGE", "$page1:example.org").Replace(string(b)))
}

// A page of a channel with answer_users carries the signed answers and the
// hint; a listed user's ✅ acknowledges and reply "snooze" snoozes, each
// answered in the room; an unlisted user's reaction, and a reaction on an
// event the bot did not send, do nothing.
func TestMatrixAnswers(t *testing.T) {
	hs := &homeserver{t: t}
	srv := httptest.NewServer(http.HandlerFunc(hs.serve))
	defer srv.Close()
	s := New(Config{Homeserver: srv.URL, AccessToken: config.Secret{Value: "syt_token"}, Room: testRoom,
		AnswerUsers: []string{"@alice:example.org"}}, channel.Env{HTTP: srv.Client()})
	s.poll = 50 * time.Millisecond
	key := answer.Key([]byte("0123456789abcdef0123456789abcdef"))
	if !s.EnableAnswers(key, "room") {
		t.Fatal("answer_users set: pages must be answerable")
	}
	m := channel.Message{Text: "[CRITICAL] vault DEGRADED\n\ndetails", Severity: alert.Critical,
		Notification: alert.Notification{Alerts: []alert.Alert{{Name: "VdevState", Incident: "3f2a9c1e"}}}}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	var c Content
	if err := json.Unmarshal(hs.page, &c); err != nil {
		t.Fatal(err)
	}
	if c.Answer[answer.Ack] == "" || !strings.Contains(c.Body, answerHint) || !strings.HasPrefix(c.Body, "[CRITICAL] vault DEGRADED\n") {
		t.Fatalf("page content %+v", c)
	}

	var rec answertest.Recorder
	answertest.Run(t, s.Answers, &rec, func() bool {
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return hs.syncs >= 4
	})
	got := rec.Got()
	want := []string{"ack 3f2a9c1e @alice:example.org matrix:room", "snooze 3f2a9c1e @alice:example.org matrix:room"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("answers %q, want %q", got, want)
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if len(hs.notices) != 2 || !strings.HasPrefix(hs.notices[0], "✅ Incident 3f2a9c1e acknowledged by @alice:example.org") ||
		!strings.HasPrefix(hs.notices[1], "💤 Incident 3f2a9c1e snoozed by @alice:example.org") {
		t.Errorf("replies in the room %q", hs.notices)
	}
}

// Without answer_users pages carry nothing and nothing is polled; a
// resolved notice never carries answers.
func TestMatrixNoAnswers(t *testing.T) {
	s := New(Config{Homeserver: "https://matrix.example.org", AccessToken: config.Secret{Value: "t"}, Room: testRoom}, channel.Env{})
	if s.EnableAnswers(answer.Key([]byte("0123456789abcdef0123456789abcdef")), "room") {
		t.Error("answerable without answer_users")
	}
	s2 := New(Config{Homeserver: "https://matrix.example.org", AccessToken: config.Secret{Value: "t"}, Room: testRoom, AnswerUsers: []string{"@a:b"}}, channel.Env{})
	s2.EnableAnswers(answer.Key([]byte("0123456789abcdef0123456789abcdef")), "room")
	m := channel.Message{Text: "[RESOLVED] x", Resolved: true, Notification: alert.Notification{Alerts: []alert.Alert{{Incident: "3f2a9c1e"}}}}
	if c := s2.answerable(m, NewContent(m, m.Text)); c.Answer != nil || strings.Contains(c.Body, answerHint) {
		t.Errorf("a resolved notice carries answers: %+v", c)
	}
}

func TestMatrixAnswerUsersValidate(t *testing.T) {
	var errs config.Errors
	Config{Homeserver: "https://m.example.org", AccessToken: config.Secret{Value: "t"}, Room: testRoom,
		AnswerUsers: []string{"alice", "@bob", "@carol:example.org"}}.Validate("c", &errs)
	if len(errs) != 2 || !strings.Contains(errs.Error(), `c.answer_users[0] = "alice": want a Matrix user ID`) || !strings.Contains(errs.Error(), "c.answer_users[1]") {
		t.Errorf("errors %v", errs)
	}
}

func FuzzVerbOf(f *testing.F) {
	f.Add("m.reaction", `{"m.relates_to":{"rel_type":"m.annotation","event_id":"$x","key":"✅"}}`)
	f.Add("m.room.message", `{"body":"> quote\n\nack","m.relates_to":{"m.in_reply_to":{"event_id":"$x"}}}`)
	f.Add("m.room.message", `{"body":"ack"}`)
	f.Fuzz(func(t *testing.T, typ, content string) {
		verb, about := verbOf(event{Type: typ, Content: json.RawMessage(content)})
		if (verb == "") != (about == "") && verb != "" {
			t.Errorf("verb %q about %q", verb, about)
		}
		if verb != "" && verb != answer.Ack && verb != answer.Snooze {
			t.Errorf("verb %q", verb)
		}
	})
}
