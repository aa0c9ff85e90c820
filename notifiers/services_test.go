package notifiers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/config"
)

const wantSummary = "[CRITICAL] vault DEGRADED — disk WD-WX32D7088AF1 FAULTED, raidz2-0 can lose 1 more disk"

func sendOne(t *testing.T, cc config.ChannelConfig, n alert.Notification) error {
	t.Helper()
	ch := buildOne(t, cc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ch.Send(ctx, RenderGuided(n, testGuide))
}

func only(t *testing.T, s *httpSink) hit {
	t.Helper()
	hs := s.all()
	if len(hs) != 1 {
		t.Fatalf("service got %d requests, want 1", len(hs))
	}
	return hs[0]
}

func TestPushoverRequest(t *testing.T) {
	s := startHTTP(t, `{"status":1,"request":"abc"}`)
	cc := config.ChannelConfig{Name: "phone", Type: config.ChannelPushover, APIURL: s.URL + "/1/messages.json",
		Token: config.Secret{Value: "azGDORePK8gMaC0QOYAMyEEuzJnyUi"}, User: config.Secret{Value: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"}}
	if err := sendOne(t, cc, firingNotification("nas1", "p-1")); err != nil {
		t.Fatal(err)
	}
	h := only(t, s)
	if h.Method != http.MethodPost || h.Path != "/1/messages.json" {
		t.Errorf("%s %s", h.Method, h.Path)
	}
	if ct := h.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q", ct)
	}
	f, err := url.ParseQuery(string(h.Body))
	if err != nil {
		t.Fatal(err)
	}
	if f.Get("token") != "azGDORePK8gMaC0QOYAMyEEuzJnyUi" || f.Get("user") != "uQiRzpo4DXghDmr9QzzfQu27cmVRsG" {
		t.Errorf("token/user %q/%q", f.Get("token"), f.Get("user"))
	}
	if f.Get("priority") != "1" {
		t.Errorf("priority %q, want 1 for critical", f.Get("priority"))
	}
	if f.Get("title") != "zwatch nas1: CRITICAL" {
		t.Errorf("title %q", f.Get("title"))
	}
	if first, _, _ := strings.Cut(f.Get("message"), "\n"); first != wantSummary {
		t.Errorf("first line %q", first)
	}
	if n := utf8.RuneCountInString(f.Get("message")); n > 1024 {
		t.Errorf("message has %d characters, Pushover allows 1024", n)
	}
	if f.Get("timestamp") == "" {
		t.Error("no timestamp")
	}
}

func TestPushoverRefusalAndResolvedPriority(t *testing.T) {
	s := startHTTP(t, `{"token":"invalid","errors":["application token is invalid"],"status":0}`)
	s.answer = func(w http.ResponseWriter, h hit) {
		s.record(h)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"token":"invalid","errors":["application token is invalid"],"status":0}`))
	}
	cc := config.ChannelConfig{Name: "phone", Type: config.ChannelPushover, APIURL: s.URL,
		Token: config.Secret{Value: "badtoken123"}, User: config.Secret{Value: "user123"}}
	ch := buildOne(t, cc)
	err := ch.Send(context.Background(), Render(firingNotification("nas1", "x")))
	if err == nil || !strings.Contains(err.Error(), "application token is invalid") {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), "badtoken123") {
		t.Errorf("error reveals the token: %v", err)
	}
	if fix := ch.Fix(err); !strings.Contains(fix, "pushover.net/apps") {
		t.Errorf("fix %q", fix)
	}

	ok := startHTTP(t, `{"status":1}`)
	cc.APIURL = ok.URL
	n := firingNotification("nas1", "r")
	end := n.Alerts[0].StartsAt.Add(2 * time.Hour)
	n.Alerts[0].State, n.Alerts[0].EndsAt, n.Status = alert.Resolved, &end, alert.Resolved
	if err := sendOne(t, cc, n); err != nil {
		t.Fatal(err)
	}
	f, _ := url.ParseQuery(string(only(t, ok).Body))
	if f.Get("priority") != "-1" || !strings.HasPrefix(f.Get("message"), "[RESOLVED] vault DEGRADED") {
		t.Errorf("resolved: priority %q message %q", f.Get("priority"), f.Get("message"))
	}
}

func TestTelegramRequest(t *testing.T) {
	s := startHTTP(t, `{"ok":true,"result":{"message_id":1}}`)
	cc := config.ChannelConfig{Name: "tg", Type: config.ChannelTelegram, APIURL: s.URL,
		Token: config.Secret{Value: "123456:ABC-DEF"}, ChatIDs: []string{"-1001234567890", "@nasalerts"}}
	if err := sendOne(t, cc, firingNotification("nas1", "t-1")); err != nil {
		t.Fatal(err)
	}
	hs := s.all()
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
		j := h.json(t)
		want := []any{float64(-1001234567890), "@nasalerts"}[i]
		if j["chat_id"] != want {
			t.Errorf("chat_id %v, want %v", j["chat_id"], want)
		}
		if text, _ := j["text"].(string); !strings.HasPrefix(text, wantSummary+"\n") || !strings.Contains(text, guideText) {
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
	s := startHTTP(t, "")
	fail := true
	s.answer = func(w http.ResponseWriter, h hit) {
		s.record(h)
		if strings.Contains(string(h.Body), "@second") && fail {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}
	cc := config.ChannelConfig{Name: "tg", Type: config.ChannelTelegram, APIURL: s.URL,
		Token: config.Secret{Value: "123456:ABC-DEF"}, ChatIDs: []string{"42", "@second"}}
	ch := buildOne(t, cc)
	m := Render(firingNotification("nas1", "t-2"))
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
	for _, h := range s.all() {
		if strings.Contains(string(h.Body), `"chat_id":42`) {
			to42++
		}
	}
	if to42 != 1 {
		t.Errorf("chat 42 got the message %d times, want 1", to42)
	}
}

func TestNtfyRequest(t *testing.T) {
	s := startHTTP(t, `{"id":"x"}`)
	cc := config.ChannelConfig{Name: "ntfy", Type: config.ChannelNtfy, URL: s.URL, Topic: "nas1-alerts-k3j4", Token: config.Secret{Value: "tk_abcdef"}}
	if err := sendOne(t, cc, firingNotification("nas1", "n-1")); err != nil {
		t.Fatal(err)
	}
	h := only(t, s)
	if h.Method != http.MethodPost || h.Path != "/" {
		t.Errorf("%s %s", h.Method, h.Path)
	}
	if h.Header.Get("Authorization") != "Bearer tk_abcdef" {
		t.Errorf("Authorization %q", h.Header.Get("Authorization"))
	}
	j := h.json(t)
	if j["topic"] != "nas1-alerts-k3j4" || j["priority"] != float64(5) || j["title"] != "zwatch nas1: CRITICAL" {
		t.Errorf("payload %v", j)
	}
	if msg, _ := j["message"].(string); !strings.HasPrefix(msg, wantSummary) || len(msg) > 4096 {
		t.Errorf("message (%d bytes) %q", len(msg), msg)
	}
	if tags, _ := j["tags"].([]any); len(tags) == 0 || tags[0] != "rotating_light" {
		t.Errorf("tags %v", j["tags"])
	}
}

func TestNtfyDefaultsToPublicServer(t *testing.T) {
	n := newNtfy(config.ChannelConfig{Topic: "x"}, http.DefaultClient)
	if n.url != "https://ntfy.sh" {
		t.Errorf("default url %q", n.url)
	}
}

func TestGotifyRequest(t *testing.T) {
	s := startHTTP(t, `{"id":1}`)
	cc := config.ChannelConfig{Name: "gotify", Type: config.ChannelGotify, URL: s.URL + "/", Token: config.Secret{Value: "AbCdEf.123"}}
	if err := sendOne(t, cc, firingNotification("nas1", "g-1")); err != nil {
		t.Fatal(err)
	}
	h := only(t, s)
	if h.Method != http.MethodPost || h.Path != "/message" || h.Header.Get("X-Gotify-Key") != "AbCdEf.123" {
		t.Errorf("%s %s key %q", h.Method, h.Path, h.Header.Get("X-Gotify-Key"))
	}
	if strings.Contains(h.RawQuery, "token") {
		t.Error("token in the query string")
	}
	j := h.json(t)
	if j["priority"] != float64(8) || j["title"] != "zwatch nas1: CRITICAL" {
		t.Errorf("payload %v", j)
	}
	extras, _ := j["extras"].(map[string]any)
	if d, _ := extras["client::display"].(map[string]any); d["contentType"] != "text/plain" {
		t.Errorf("extras %v", j["extras"])
	}
}

func TestDiscordRequest(t *testing.T) {
	s := startHTTP(t, "")
	s.answer = func(w http.ResponseWriter, h hit) { s.record(h); w.WriteHeader(http.StatusNoContent) }
	cc := config.ChannelConfig{Name: "discord", Type: config.ChannelDiscord,
		WebhookURL: config.Secret{Value: s.URL + "/api/webhooks/1234/SeCrEtToKeN"}}
	if err := sendOne(t, cc, firingNotification("nas1", "d-1")); err != nil {
		t.Fatal(err)
	}
	h := only(t, s)
	if h.Method != http.MethodPost || h.Path != "/api/webhooks/1234/SeCrEtToKeN" {
		t.Errorf("%s %s", h.Method, h.Path)
	}
	j := h.json(t)
	content, _ := j["content"].(string)
	if !strings.HasPrefix(content, wantSummary) || utf8.RuneCountInString(content) > 2000 {
		t.Errorf("content (%d chars)", utf8.RuneCountInString(content))
	}
	am, _ := j["allowed_mentions"].(map[string]any)
	if p, ok := am["parse"].([]any); !ok || len(p) != 0 {
		t.Errorf("allowed_mentions %v", j["allowed_mentions"])
	}

	s.answer = func(w http.ResponseWriter, h hit) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message": "Unknown Webhook", "code": 10015}`))
	}
	ch := buildOne(t, cc)
	err := ch.Send(context.Background(), Render(firingNotification("nas1", "d-2")))
	if err == nil || strings.Contains(err.Error(), "SeCrEtToKeN") || !strings.Contains(err.Error(), "Unknown Webhook") {
		t.Errorf("err %v", err)
	}
	if !strings.Contains(ch.Fix(err), "webhook") {
		t.Errorf("fix %q", ch.Fix(err))
	}
}

func TestSlackWebhookRequest(t *testing.T) {
	s := startHTTP(t, "ok")
	cc := config.ChannelConfig{Name: "slack", Type: config.ChannelSlack,
		WebhookURL: config.Secret{Value: s.URL + "/services/T000/B000/XXXX"}}
	if err := sendOne(t, cc, firingNotification("nas1", "s-1")); err != nil {
		t.Fatal(err)
	}
	h := only(t, s)
	if h.Method != http.MethodPost || h.Path != "/services/T000/B000/XXXX" || !strings.HasPrefix(h.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%s %s %s", h.Method, h.Path, h.Header.Get("Content-Type"))
	}
	if text, _ := h.json(t)["text"].(string); !strings.HasPrefix(text, wantSummary) {
		t.Errorf("text %q", text)
	}
}

func TestSlackTokenRequest(t *testing.T) {
	s := startHTTP(t, `{"ok":true,"channel":"C123","ts":"1.2"}`)
	cc := config.ChannelConfig{Name: "slack", Type: config.ChannelSlack, APIURL: s.URL + "/api",
		Token: config.Secret{Value: "xoxb-1-2-3"}, Channel: "C123"}
	if err := sendOne(t, cc, firingNotification("nas1", "s-2")); err != nil {
		t.Fatal(err)
	}
	h := only(t, s)
	if h.Method != http.MethodPost || h.Path != "/api/chat.postMessage" || h.Header.Get("Authorization") != "Bearer xoxb-1-2-3" {
		t.Errorf("%s %s auth %q", h.Method, h.Path, h.Header.Get("Authorization"))
	}
	if ct := h.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if j := h.json(t); j["channel"] != "C123" {
		t.Errorf("payload %v", j)
	}

	s.reply = `{"ok":false,"error":"invalid_auth"}`
	ch := buildOne(t, cc)
	err := ch.Send(context.Background(), Render(firingNotification("nas1", "s-3")))
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("ok:false accepted: %v", err)
	}
	if !strings.Contains(ch.Fix(err), "xoxb") {
		t.Errorf("fix %q", ch.Fix(err))
	}
}

func TestWebhookRequest(t *testing.T) {
	s := startHTTP(t, "")
	cc := config.ChannelConfig{Name: "hook", Type: config.ChannelWebhook, URL: s.URL + "/zwatch/hook",
		Headers: map[string]config.Secret{"Authorization": {Value: "Bearer hooksecret"}, "X-Env": {Value: "prod"}}}
	if err := sendOne(t, cc, firingNotification("nas1", "w-1")); err != nil {
		t.Fatal(err)
	}
	h := only(t, s)
	if h.Method != http.MethodPost || h.Path != "/zwatch/hook" || h.Header.Get("Authorization") != "Bearer hooksecret" || h.Header.Get("X-Env") != "prod" {
		t.Errorf("%s %s %v", h.Method, h.Path, h.Header)
	}
	j := h.json(t)
	if j["version"] != "1" || j["id"] != "w-1" || j["host"] != "nas1" || j["status"] != "firing" || j["severity"] != "critical" || j["summary"] != wantSummary {
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

	s.answer = func(w http.ResponseWriter, h hit) { w.WriteHeader(http.StatusForbidden) }
	ch := buildOne(t, cc)
	err := ch.Send(context.Background(), Render(firingNotification("nas1", "w-2")))
	if err == nil || !strings.Contains(ch.Fix(err), "403") {
		t.Errorf("err %v fix %q", err, ch.Fix(err))
	}
}
