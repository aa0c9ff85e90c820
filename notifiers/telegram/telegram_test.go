package telegram_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

func channelTo(api, token string, chats ...string) config.ChannelConfig {
	return config.ChannelConfig{Name: "tg", Type: "telegram", Settings: telegram.Config{APIURL: api,
		Token: config.Secret{Value: token}, ChatIDs: chats}}
}

func TestTelegramRequest(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"ok":true,"result":{"message_id":1}}`)
	cc := channelTo(s.URL, "123456:ABC-DEF", "-1001234567890", "@nasalerts")
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "t-1")); err != nil {
		t.Fatal(err)
	}
	hs := s.All()
	if len(hs) != 2 {
		t.Fatalf("%d requests, want one per chat", len(hs))
	}
	for i, h := range hs {
		if h.Method != http.MethodPost || h.Path != "/bot123456:ABC-DEF/sendMessage" {
			t.Errorf("%s %s", h.Method, h.Path)
		}
		if ct := h.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		j := h.JSON(t)
		want := []any{float64(-1001234567890), "@nasalerts"}[i]
		if j["chat_id"] != want {
			t.Errorf("chat_id %v, want %v", j["chat_id"], want)
		}
		if text, _ := j["text"].(string); !strings.HasPrefix(text, notifytest.WantSummary+"\n") || !strings.Contains(text, notifytest.GuideText) {
			t.Errorf("text %q", text)
		}
		if _, has := j["parse_mode"]; has {
			t.Error("parse_mode set: alert text is not escaped for it")
		}
		if j["disable_notification"] != false {
			t.Errorf("critical sent silently")
		}
	}
}

func TestTelegramPartialFailureRetriesOnlyTheRest(t *testing.T) {
	s := notifytest.StartHTTP(t, "")
	fail := true
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		if strings.Contains(string(h.Body), "@second") && fail {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	ch := notifytest.BuildOne(t, channelTo(s.URL, "123456:ABC-DEF", "42", "@second"))
	m := notifiers.Render(notifytest.Firing("nas1", "t-2"))
	err := ch.Send(context.Background(), m)
	if err == nil || !strings.Contains(ch.Fix(err), "chat id") {
		t.Fatalf("err %v fix %q", err, ch.Fix(err))
	}
	if strings.Contains(err.Error(), "ABC-DEF") {
		t.Errorf("error reveals the bot token: %v", err)
	}
	fail = false
	if err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	to42 := 0
	for _, h := range s.All() {
		if strings.Contains(string(h.Body), `"chat_id":42`) {
			to42++
		}
	}
	if to42 != 1 {
		t.Errorf("chat 42 got the message %d times, want 1", to42)
	}
}

func TestTelegramFixHint(t *testing.T) {
	s := telegram.New(telegram.Config{Token: config.Secret{Value: "1:a"}, ChatIDs: []string{"1"}}, channel.Env{HTTP: http.DefaultClient})
	if fix := channel.Fix(s, &channel.ServiceError{Service: "telegram", Status: 401, Detail: "Unauthorized"}); !strings.Contains(fix, "BotFather") {
		t.Errorf("telegram 401 fix %q", fix)
	}
}
