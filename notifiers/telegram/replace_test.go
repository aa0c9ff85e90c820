package telegram_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

// A page that offers the replacement carries Replace and Open guide; a
// tap on Replace puts the question (from do) in a new message replying to
// the page, with a button per choice; the confirmation marks the question
// answered, sends the start, shows the progress by editing that message
// and sends the end as a new message (an edit does not ring); a tap on a
// closed question is told so.
func TestTelegramReplaceFromThePhone(t *testing.T) {
	s := notifytest.StartHTTP(t, "")
	key := answer.Key(strings.Repeat("k", 32))
	replaceData := key.Sign(answer.Action{Verb: answer.Replace, Incident: "3f2a9c1e"})
	confirm := answer.Action{Verb: answer.Confirm, Incident: "0a1b2c3d"}
	cancel := answer.Action{Verb: answer.Cancel, Incident: "0a1b2c3d"}
	var mu sync.Mutex
	queue := []string{tapped(t, 200, 123456789, replaceData), tapped(t, 201, 123456789, key.Sign(confirm)), tapped(t, 202, 123456789, key.Sign(cancel))}
	sent := int64(500)
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(h.Path, "/getUpdates"):
			mu.Lock()
			var next string
			if len(queue) > 0 {
				next, queue = queue[0], queue[1:]
			}
			mu.Unlock()
			if next == "" {
				select {
				case <-h.Context.Done():
				case <-time.After(200 * time.Millisecond):
				}
				next = `{"ok":true,"result":[]}`
			}
			_, _ = w.Write([]byte(next))
			return
		case strings.HasSuffix(h.Path, "/sendMessage"):
			s.Record(h)
			mu.Lock()
			sent++
			id := sent
			mu.Unlock()
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": map[string]any{"message_id": id, "date": 1765000000, "chat": map[string]any{"id": 123456789, "type": "private"}}})
			return
		}
		s.Record(h)
		_, _ = w.Write([]byte(`{"ok":true,"result":true}`))
	})
	snd := telegram.New(telegram.Config{APIURL: s.URL, Token: config.Secret{Value: "123456:ABC-DEF"}, ChatIDs: []string{"123456789"},
		AnswerUsers: []string{"123456789"}}, channel.Env{HTTP: &http.Client{Timeout: 5 * time.Second}})
	if !snd.EnableAnswers(key, "phone") {
		t.Fatal("answers not enabled")
	}
	n := notifytest.Firing("nas1", "t-2")
	for i := range n.Alerts {
		n.Alerts[i].Incident = "3f2a9c1e"
	}
	m := notifiers.Render(n)
	m.Replace, m.PageURL = "ZWS0001", "https://nas.example.net:8931/#incident-3f2a9c1e"
	if err := snd.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	kb, _ := json.Marshal((<-s.Got).JSON(t)["reply_markup"])
	for _, want := range []string{`[{"callback_data":"` + replaceData + `","text":"🔁 Replace ZWS0001…"}]`, `[{"text":"📖 Open guide","url":"https://nas.example.net:8931/#incident-3f2a9c1e"}]`} {
		if !strings.Contains(string(kb), want) {
			t.Errorf("the page's buttons %s lack %s", kb, want)
		}
	}

	progress := make(chan string, 2)
	do := func(_ context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
		switch act {
		case answer.Action{Verb: answer.Replace, Incident: "3f2a9c1e"}:
			return answer.Outcome{Text: "Replace scsi-35000c500a0000001 in pool vault?\nzpool replace vault 3518067281308411962 /dev/disk/by-id/wwn-0x5000c500a0000003",
				Ask: []answer.Option{{Label: "⚠️ Erase ZWS0003 and replace", Action: confirm}, {Label: "Cancel", Action: cancel}}}, nil
		case confirm:
			if by != "@alice" || source != "telegram:phone" {
				t.Errorf("confirmed by %s through %s", by, source)
			}
			progress <- "Resilvering onto /dev/disk/by-id/wwn-0x5000c500a0000003: 50.00% resilvered"
			progress <- "✅ Replaced scsi-35000c500a0000001 with /dev/disk/by-id/wwn-0x5000c500a0000003"
			close(progress)
			return answer.Outcome{Text: "Started by @alice: zpool replace vault 3518067281308411962 /dev/disk/by-id/wwn-0x5000c500a0000003", Progress: progress}, nil
		}
		return answer.Outcome{}, answer.ErrClosed
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = snd.Answers(ctx, do, slog.New(slog.DiscardHandler)); close(done) }()
	var calls []string
	deadline := time.After(10 * time.Second)
	for !strings.Contains(strings.Join(calls, "\n"), "sendMessage ✅ Replaced") || !strings.Contains(strings.Join(calls, "\n"), "answerCallbackQuery this question is no longer open") {
		select {
		case h := <-s.Got:
			j := h.JSON(t)
			method := h.Path[strings.LastIndexByte(h.Path, '/')+1:]
			switch method {
			case "sendMessage":
				kb, _ := json.Marshal(j["reply_markup"])
				rp, _ := json.Marshal(j["reply_parameters"])
				calls = append(calls, method+" "+j["text"].(string)+" "+string(kb)+" "+string(rp))
			case "editMessageText", "answerCallbackQuery":
				calls = append(calls, method+" "+j["text"].(string))
			case "editMessageReplyMarkup":
				kb, _ := json.Marshal(j["reply_markup"])
				calls = append(calls, method+" "+string(kb))
			}
		case <-deadline:
			t.Fatalf("calls so far:\n%s", strings.Join(calls, "\n"))
		}
	}
	stop()
	<-done
	all := strings.Join(calls, "\n")
	for _, want := range []string{
		"answerCallbackQuery See the message below.",
		`sendMessage Replace scsi-35000c500a0000001 in pool vault?`,
		`[[{"callback_data":"` + key.Sign(confirm) + `","text":"⚠️ Erase ZWS0003 and replace"}],[{"callback_data":"` + key.Sign(cancel) + `","text":"Cancel"}]]`,
		`{"allow_sending_without_reply":true,"message_id":1365}`,
		"answerCallbackQuery Replacement started.",
		`editMessageReplyMarkup {"inline_keyboard":[[{"callback_data":"zw1 done","text":"🔁 Confirmed by @alice"}]]}`,
		"sendMessage Started by @alice: zpool replace vault",
		"editMessageText Started by @alice: zpool replace vault 3518067281308411962 /dev/disk/by-id/wwn-0x5000c500a0000003\n\nResilvering onto",
		"sendMessage ✅ Replaced scsi-35000c500a0000001",
		"answerCallbackQuery this question is no longer open",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
}

// Telegram refuses some URLs in buttons (BUTTON_URL_INVALID, its
// documented error for a URL it will not open): the page goes out without
// Open guide instead of not at all.
func TestTelegramPageWithoutARefusedGuideURL(t *testing.T) {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(h.Body), `"url"`) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":400,"description":"Bad Request: BUTTON_URL_INVALID"}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true,"result":{"message_id":7}}`))
	})
	snd := telegram.New(telegram.Config{APIURL: s.URL, Token: config.Secret{Value: "123456:ABC-DEF"}, ChatIDs: []string{"123456789"},
		AnswerUsers: []string{"123456789"}}, channel.Env{HTTP: &http.Client{Timeout: 5 * time.Second}})
	snd.EnableAnswers(answer.Key(strings.Repeat("k", 32)), "phone")
	n := notifytest.Firing("nas1", "t-3")
	for i := range n.Alerts {
		n.Alerts[i].Incident = "3f2a9c1e"
	}
	m := notifiers.Render(n)
	m.PageURL = "http://localhost:8931/#incident-3f2a9c1e"
	if err := snd.Send(context.Background(), m); err != nil {
		t.Fatalf("the page was not sent: %v", err)
	}
	first, second := <-s.Got, <-s.Got
	if !strings.Contains(string(first.Body), "Open guide") || strings.Contains(string(second.Body), "Open guide") || !strings.Contains(string(second.Body), "Acknowledge") {
		t.Errorf("tries:\n%s\n%s", first.Body, second.Body)
	}
}
