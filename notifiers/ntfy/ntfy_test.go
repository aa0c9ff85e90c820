package ntfy_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/ntfy"
)

func TestNtfyRequest(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"id":"x"}`)
	cc := config.ChannelConfig{Name: "ntfy", Type: "ntfy", Settings: ntfy.Config{URL: s.URL, Topic: "nas1-alerts-k3j4", Token: config.Secret{Value: "tk_abcdef"}}}
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "n-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != "/" {
		t.Errorf("%s %s", h.Method, h.Path)
	}
	if h.Header.Get("Authorization") != "Bearer tk_abcdef" {
		t.Errorf("Authorization %q", h.Header.Get("Authorization"))
	}
	j := h.JSON(t)
	if j["topic"] != "nas1-alerts-k3j4" || j["priority"] != float64(5) || j["title"] != "zwatch nas1: CRITICAL" {
		t.Errorf("payload %v", j)
	}
	if msg, _ := j["message"].(string); !strings.HasPrefix(msg, notifytest.WantSummary) || len(msg) > 4096 {
		t.Errorf("message (%d bytes) %q", len(msg), msg)
	}
	if tags, _ := j["tags"].([]any); len(tags) == 0 || tags[0] != "rotating_light" {
		t.Errorf("tags %v", j["tags"])
	}
}

// A page's answer links become ntfy "view" action buttons (at most 3, the
// JSON shape of https://docs.ntfy.sh/publish/#action-buttons); a page
// without links has no actions key.
func TestNtfyAnswerLinksAsActions(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"id":"x"}`)
	cc := config.ChannelConfig{Name: "ntfy", Type: "ntfy", Settings: ntfy.Config{URL: s.URL, Topic: "nas1-alerts-k3j4"}}
	ch := notifytest.BuildOne(t, cc)
	m := notifiers.Render(notifytest.Firing("nas1", "n-1"))
	if err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if _, has := notifytest.Only(t, s).JSON(t)["actions"]; has {
		t.Error("actions without links")
	}
	m.Links = []channel.Link{{Label: "Acknowledge", URL: "https://nas.example.net/answer?t=a"}, {Label: "Snooze 24 h", URL: "https://nas.example.net/answer?t=b"},
		{Label: "c", URL: "https://x/c"}, {Label: "d", URL: "https://x/d"}}
	if err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	all := s.All()
	acts, _ := all[len(all)-1].JSON(t)["actions"].([]any)
	if len(acts) != 3 {
		t.Fatalf("actions %v, want 3", acts)
	}
	first, _ := acts[0].(map[string]any)
	if first["action"] != "view" || first["label"] != "Acknowledge" || first["url"] != "https://nas.example.net/answer?t=a" || first["clear"] != true {
		t.Errorf("first action %v", first)
	}
}
