package gotify_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/gotify"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

func TestGotifyRequest(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"id":1}`)
	cc := config.ChannelConfig{Name: "gotify", Type: "gotify", Settings: gotify.Config{URL: s.URL + "/", Token: config.Secret{Value: "AbCdEf.123"}}}
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "g-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != "/message" || h.Header.Get("X-Gotify-Key") != "AbCdEf.123" {
		t.Errorf("%s %s key %q", h.Method, h.Path, h.Header.Get("X-Gotify-Key"))
	}
	if strings.Contains(h.RawQuery, "token") {
		t.Error("token in the query string")
	}
	j := h.JSON(t)
	if j["priority"] != float64(8) || j["title"] != "zwatch nas1: CRITICAL" {
		t.Errorf("payload %v", j)
	}
	extras, _ := j["extras"].(map[string]any)
	if d, _ := extras["client::display"].(map[string]any); d["contentType"] != "text/plain" {
		t.Errorf("extras %v", j["extras"])
	}
}
