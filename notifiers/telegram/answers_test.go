package telegram_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"log/slog"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

// tapped is getUpdates' answer with one tap of data by user, from the
// documented shape (testdata/SOURCES.md).
func tapped(t *testing.T, updateID int64, user int64, data string) string {
	t.Helper()
	raw, err := os.ReadFile("testdata/getUpdates-callback_query.json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	u := v["result"].([]any)[0].(map[string]any)
	u["update_id"] = updateID
	cq := u["callback_query"].(map[string]any)
	cq["data"] = data
	cq["from"].(map[string]any)["id"] = user
	out, _ := json.Marshal(v)
	return string(out)
}

// Pages carry Acknowledge and Snooze buttons whose data the install's key
// signed; taps come back through getUpdates. A tap by a listed user acts
// (through do, as @alice from telegram:phone), is answered and puts who
// answered on the message; data zwatch did not sign, and a user not listed,
// are refused without acting.
func TestTelegramAnswers(t *testing.T) {
	s := notifytest.StartHTTP(t, "")
	key := answer.Key(strings.Repeat("k", 32))
	ack := key.Sign(answer.Action{Verb: answer.Ack, Incident: "3f2a9c1e"})
	snooze := key.Sign(answer.Action{Verb: answer.Snooze, Incident: "3f2a9c1e"})
	var mu sync.Mutex
	queue := []string{
		tapped(t, 100, 123456789, ack),
		tapped(t, 101, 123456789, strings.Replace(ack, "ack", "snooze", 1)), // forged
		tapped(t, 102, 555, snooze),                                         // not listed
		tapped(t, 103, 123456789, snooze),
		tapped(t, 104, 123456789, "zw1 done"),
	}
	var offsets []float64
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(h.Path, "/getUpdates") {
			mu.Lock()
			offsets = append(offsets, h.JSON(t)["offset"].(float64))
			var next string
			if len(queue) > 0 {
				next, queue = queue[0], queue[1:]
			}
			mu.Unlock()
			if next == "" {
				select { // a long poll with nothing new
				case <-h.Context.Done():
				case <-time.After(200 * time.Millisecond):
				}
				next = `{"ok":true,"result":[]}`
			}
			_, _ = w.Write([]byte(next))
			return
		}
		s.Record(h)
		_, _ = w.Write([]byte(`{"ok":true,"result":true}`))
	})
	snd := telegram.New(telegram.Config{APIURL: s.URL, Token: config.Secret{Value: "123456:ABC-DEF"}, ChatIDs: []string{"123456789"},
		AnswerUsers: []string{"123456789"}}, channel.Env{HTTP: &http.Client{Timeout: 5 * time.Second}})
	if !snd.EnableAnswers(key, "phone") {
		t.Fatal("answers not enabled with answer_users set")
	}

	n := notifytest.Firing("nas1", "t-1")
	for i := range n.Alerts {
		n.Alerts[i].Incident = "3f2a9c1e"
	}
	if err := snd.Send(context.Background(), notifiers.Render(n)); err != nil {
		t.Fatal(err)
	}
	page := (<-s.Got).JSON(t)
	kb, _ := json.Marshal(page["reply_markup"])
	if !strings.Contains(string(kb), `"text":"✅ Acknowledge"`) || !strings.Contains(string(kb), ack) || !strings.Contains(string(kb), snooze) {
		t.Fatalf("the page's buttons: %s", kb)
	}

	type call struct {
		act        answer.Action
		by, source string
	}
	var calls []call
	until := time.Date(2026, 12, 8, 5, 0, 0, 0, time.UTC)
	do := func(_ context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, call{act, by, source})
		return answer.Outcome{Host: "nas1", Alerts: 3, Until: until}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = snd.Answers(ctx, do, slog.New(slog.DiscardHandler)); close(done) }()
	var replies, edits []string
	deadline := time.After(10 * time.Second)
	for len(replies) < 5 {
		select {
		case h := <-s.Got:
			j := h.JSON(t)
			switch {
			case strings.HasSuffix(h.Path, "/answerCallbackQuery"):
				replies = append(replies, j["text"].(string))
			case strings.HasSuffix(h.Path, "/editMessageReplyMarkup"):
				b, _ := json.Marshal(j["reply_markup"])
				edits = append(edits, string(b))
				if j["chat_id"] != float64(123456789) || j["message_id"] != float64(1365) {
					t.Errorf("edit of %v/%v", j["chat_id"], j["message_id"])
				}
			}
		case <-deadline:
			t.Fatalf("replies so far: %q", replies)
		}
	}
	cancel()
	<-done

	want := []string{"Acknowledged: no repeats", "This button is not valid.", "You may not answer", "Snoozed until", "Already answered."}
	for i, w := range want {
		if !strings.HasPrefix(replies[i], w) {
			t.Errorf("reply %d %q, want %q…", i, replies[i], w)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 || calls[0].act.Verb != answer.Ack || calls[1].act.Verb != answer.Snooze || calls[0].act.Incident != "3f2a9c1e" ||
		calls[0].by != "@alice" || calls[0].source != "telegram:phone" {
		t.Errorf("answers carried out: %+v", calls)
	}
	if len(edits) != 2 || !strings.Contains(edits[0], "Acknowledged by @alice") || !strings.Contains(edits[1], "Snoozed by @alice") {
		t.Errorf("the messages now say %q", edits)
	}
	if len(offsets) < 2 || offsets[0] != 0 || offsets[1] != 101 {
		t.Errorf("getUpdates offsets %v: each tap is confirmed by the next request", offsets)
	}
}

// Without answer_users nobody may answer: no buttons, no poller.
func TestTelegramNoAnswerUsersNoButtons(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"ok":true}`)
	snd := telegram.New(telegram.Config{APIURL: s.URL, Token: config.Secret{Value: "123456:ABC-DEF"}, ChatIDs: []string{"42"}},
		channel.Env{HTTP: http.DefaultClient})
	if snd.EnableAnswers(answer.Key(strings.Repeat("k", 32)), "phone") {
		t.Error("answers enabled with no answer_users")
	}
	n := notifytest.Firing("nas1", "t-2")
	n.Alerts[0].Incident = "3f2a9c1e"
	if err := snd.Send(context.Background(), notifiers.Render(n)); err != nil {
		t.Fatal(err)
	}
	if _, has := notifytest.Only(t, s).JSON(t)["reply_markup"]; has {
		t.Error("buttons on a page nobody may answer")
	}
}

func TestTelegramAnswerUsersValidated(t *testing.T) {
	var errs config.Errors
	telegram.Config{Token: config.Secret{Value: "1:a"}, ChatIDs: []string{"1"}, AnswerUsers: []string{"@alice"}}.Validate("notify.channels[0]", &errs)
	if len(errs) == 0 || !strings.Contains(errs.Error(), "notify.channels[0].answer_users[0]") {
		t.Errorf("got %v", errs)
	}
}
