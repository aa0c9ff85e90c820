package discord_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/discord"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

func TestDiscordRequest(t *testing.T) {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) { s.Record(h); w.WriteHeader(http.StatusNoContent) })
	cc := config.ChannelConfig{Name: "discord", Type: "discord",
		Settings: discord.Config{WebhookURL: config.Secret{Value: s.URL + "/api/webhooks/1234/SeCrEtToKeN"}}}
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "d-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != "/api/webhooks/1234/SeCrEtToKeN" {
		t.Errorf("%s %s", h.Method, h.Path)
	}
	j := h.JSON(t)
	content, _ := j["content"].(string)
	if !strings.HasPrefix(content, notifytest.WantSummary) || utf8.RuneCountInString(content) > 2000 {
		t.Errorf("content (%d chars)", utf8.RuneCountInString(content))
	}
	am, _ := j["allowed_mentions"].(map[string]any)
	if p, ok := am["parse"].([]any); !ok || len(p) != 0 {
		t.Errorf("allowed_mentions %v", j["allowed_mentions"])
	}

	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message": "Unknown Webhook", "code": 10015}`))
	})
	ch := notifytest.BuildOne(t, cc)
	err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "d-2")))
	if err == nil || strings.Contains(err.Error(), "SeCrEtToKeN") || !strings.Contains(err.Error(), "Unknown Webhook") {
		t.Errorf("err %v", err)
	}
	if !strings.Contains(ch.Fix(err), "webhook") {
		t.Errorf("fix %q", ch.Fix(err))
	}
}

// TestDiscordTransportErrorHidesWebhook: a server that is not there yields
// a url.Error, which repeats the URL; its secret path must not show.
func TestDiscordTransportErrorHidesWebhook(t *testing.T) {
	port := notifytest.FreePort(t)
	cc := config.ChannelConfig{Name: "discord", Type: "discord",
		Settings: discord.Config{WebhookURL: config.Secret{Value: "http://127.0.0.1:" + strconv.Itoa(port) + "/api/webhooks/1/SeCrEt ToKeN"}}}
	ch := notifytest.BuildOne(t, cc)
	err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "d-3")))
	if err == nil || strings.Contains(err.Error(), "SeCrEt") {
		t.Errorf("err %v", err)
	}
	if fix := ch.Fix(err); !strings.Contains(fix, "connection refused") || !strings.Contains(fix, "webhook_url") {
		t.Errorf("fix %q", fix)
	}
}
