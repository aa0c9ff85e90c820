package slack_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/slack"
)

func TestSlackWebhookRequest(t *testing.T) {
	s := notifytest.StartHTTP(t, "ok")
	cc := config.ChannelConfig{Name: "slack", Type: "slack",
		Settings: slack.Config{WebhookURL: config.Secret{Value: s.URL + "/services/T000/B000/XXXX"}}}
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "s-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != "/services/T000/B000/XXXX" || !strings.HasPrefix(h.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%s %s %s", h.Method, h.Path, h.Header.Get("Content-Type"))
	}
	if text, _ := h.JSON(t)["text"].(string); !strings.HasPrefix(text, notifytest.WantSummary) {
		t.Errorf("text %q", text)
	}
}

func TestSlackTokenRequest(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"ok":true,"channel":"C123","ts":"1.2"}`)
	cc := config.ChannelConfig{Name: "slack", Type: "slack",
		Settings: slack.Config{APIURL: s.URL + "/api", Token: config.Secret{Value: "xoxb-1-2-3"}, Channel: "C123"}}
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "s-2")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != "/api/chat.postMessage" || h.Header.Get("Authorization") != "Bearer xoxb-1-2-3" {
		t.Errorf("%s %s auth %q", h.Method, h.Path, h.Header.Get("Authorization"))
	}
	if ct := h.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if j := h.JSON(t); j["channel"] != "C123" {
		t.Errorf("payload %v", j)
	}

	s.Reply(`{"ok":false,"error":"invalid_auth"}`)
	ch := notifytest.BuildOne(t, cc)
	err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "s-3")))
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("ok:false accepted: %v", err)
	}
	if !strings.Contains(ch.Fix(err), "xoxb") {
		t.Errorf("fix %q", ch.Fix(err))
	}
}
