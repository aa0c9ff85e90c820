package ntfy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
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
