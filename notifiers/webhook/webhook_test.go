package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/webhook"
)

func TestWebhookRequest(t *testing.T) {
	s := notifytest.StartHTTP(t, "")
	cc := config.ChannelConfig{Name: "hook", Type: "webhook", Settings: webhook.Config{URL: s.URL + "/zwatch/hook",
		Headers: map[string]config.Secret{"Authorization": {Value: "Bearer hooksecret"}, "X-Env": {Value: "prod"}}}}
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "w-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != "/zwatch/hook" || h.Header.Get("Authorization") != "Bearer hooksecret" || h.Header.Get("X-Env") != "prod" {
		t.Errorf("%s %s %v", h.Method, h.Path, h.Header)
	}
	j := h.JSON(t)
	if j["version"] != "1" || j["id"] != "w-1" || j["host"] != "nas1" || j["status"] != "firing" || j["severity"] != "critical" || j["summary"] != notifytest.WantSummary {
		t.Errorf("payload %v", j)
	}
	n, _ := j["notification"].(map[string]any)
	as, _ := n["alerts"].([]any)
	if len(as) != 1 {
		t.Fatalf("notification %v", n)
	}
	rep, _ := as[0].(map[string]any)["replacement"].(map[string]any)
	if rep["pool"] != "vault" || rep["top_vdev"] != "raidz2-0" {
		t.Errorf("replacement %v", rep)
	}

	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) { w.WriteHeader(http.StatusForbidden) })
	ch := notifytest.BuildOne(t, cc)
	err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "w-2")))
	if err == nil || !strings.Contains(ch.Fix(err), "403") {
		t.Errorf("err %v fix %q", err, ch.Fix(err))
	}
	if strings.Contains(err.Error(), "hooksecret") {
		t.Errorf("error reveals a header: %v", err)
	}
}
