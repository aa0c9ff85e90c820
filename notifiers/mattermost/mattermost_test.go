package mattermost_test

// The request is checked against Mattermost's documentation:
//   incoming webhooks (POST /hooks/<key>, JSON text/channel/username/icon_url/props,
//   "ok" on success, 16383 characters per post from server 5.0, longer text split):
//     https://developers.mattermost.com/integrate/webhooks/incoming/
//   message priority ("priority": {"priority": "urgent"|"important"}):
//     https://developers.mattermost.com/integrate/reference/message-priority/
// The refusals are the server's own (server/channels/app/webhook.go):
// 400 "Invalid webhook.", 403 "This webhook is not permitted to post to the
// requested channel.", 404 "Couldn't find the channel.", 501 "Incoming
// webhooks have been disabled by the system admin.", as AppError JSON; and
// 403 api.post.post_priority.priority_post_not_allowed_for_user.request_error
// where message priority is off.

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/mattermost"
)

const hookPath = "/hooks/xxx-generatedkey-xxx"

func mmChannel(cfg mattermost.Config) config.ChannelConfig {
	return config.ChannelConfig{Name: "mm", Type: "mattermost", Settings: cfg}
}

// server answers as Mattermost does: 200 text/plain "ok".
func server(t *testing.T) *notifytest.HTTPSink {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})
	return s
}

func TestMattermostRequest(t *testing.T) {
	s := server(t)
	cc := mmChannel(mattermost.Config{WebhookURL: config.Secret{Value: s.URL + hookPath}, Channel: "nas-alerts",
		Username: "zwatch", IconURL: "https://zwatch.example/icon.png"})
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "mm-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != hookPath || h.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s %s %s", h.Method, h.Path, h.Header.Get("Content-Type"))
	}
	j := h.JSON(t)
	text, _ := j["text"].(string)
	if !strings.HasPrefix(text, notifytest.WantSummary+"\n") || !strings.Contains(text, "from bay 3 <left cage>") {
		t.Errorf("text %q", text)
	}
	if j["channel"] != "nas-alerts" || j["username"] != "zwatch" || j["icon_url"] != "https://zwatch.example/icon.png" || j["priority"] != nil {
		t.Errorf("payload %v", j)
	}
	if props, _ := j["props"].(map[string]any); props["zwatch_id"] != "mm-1" || props["zwatch_severity"] != "critical" || props["zwatch_status"] != "firing" {
		t.Errorf("props %v", j["props"])
	}

	// Without the optional keys the webhook's own settings apply.
	s2 := server(t)
	if err := notifytest.Send(t, mmChannel(mattermost.Config{WebhookURL: config.Secret{Value: s2.URL + hookPath}}), notifytest.Firing("nas1", "mm-2")); err != nil {
		t.Fatal(err)
	}
	j = notifytest.Only(t, s2).JSON(t)
	for _, k := range []string{"channel", "username", "icon_url", "priority"} {
		if _, ok := j[k]; ok {
			t.Errorf("%s sent though not configured", k)
		}
	}
}

func TestMattermostPriorityLimitAndEscaping(t *testing.T) {
	s := server(t)
	ch := notifytest.BuildOne(t, mmChannel(mattermost.Config{WebhookURL: config.Secret{Value: s.URL + hookPath}, Priority: true}))
	n := notifytest.Firing("nas1", "mm-3")
	n.Alerts[0].Description = "# not a heading *not bold* `not code` ~~not struck~~ \\n\n> not a quote\n" + strings.Repeat("é🙂 ", 9000)
	for _, tc := range []struct {
		sev      alert.Severity
		resolved bool
		want     any
	}{{alert.Critical, false, "urgent"}, {alert.Warning, false, "important"}, {alert.Info, false, nil}, {alert.Critical, true, nil}} {
		n.Alerts[0].Severity, n.Alerts[0].State, n.Status, n.Alerts[0].EndsAt = tc.sev, alert.Firing, alert.Firing, nil
		if tc.resolved {
			end := n.Alerts[0].StartsAt.Add(time.Hour)
			n.Alerts[0].State, n.Status, n.Alerts[0].EndsAt = alert.Resolved, alert.Resolved, &end
		}
		if err := ch.Send(context.Background(), notifiers.Render(n)); err != nil {
			t.Fatal(err)
		}
		all := s.All()
		j := all[len(all)-1].JSON(t)
		var got any
		if p, ok := j["priority"].(map[string]any); ok {
			got = p["priority"]
		}
		if got != tc.want {
			t.Errorf("%s resolved=%v: priority %v, want %v", tc.sev, tc.resolved, got, tc.want)
		}
	}
	text, _ := s.All()[0].JSON(t)["text"].(string)
	if n := utf8.RuneCountInString(text); n > 16383 || n < 16000 || !strings.HasSuffix(text, "…") {
		t.Errorf("text has %d characters, want at most Mattermost's 16383 and cut with …", n)
	}
	if !strings.Contains(text, "\n\\# not a heading \\*not bold\\* \\`not code\\` \\~\\~not struck\\~\\~ \\\\n\n\\> not a quote\n") {
		t.Errorf("Markdown not escaped: %.300q", text[strings.Index(text, "\n\n")+2:])
	}
}

func TestMattermostRefusalsAndHints(t *testing.T) {
	appErr := func(id, msg string, code int) string {
		return `{"id":"` + id + `","message":"` + msg + `","detailed_error":"","request_id":"hoan6o9ws7rp5xj7wu9rmysrte","status_code":` + strconv.Itoa(code) + `}`
	}
	for _, tc := range []struct {
		status     int
		body       string
		cfg        mattermost.Config
		inErr, fix string
	}{
		{400, appErr("web.incoming_webhook.invalid.app_error", "Invalid webhook.", 400), mattermost.Config{}, "Invalid webhook.", "create an incoming webhook again"},
		{403, appErr("web.incoming_webhook.channel_locked.app_error", "This webhook is not permitted to post to the requested channel.", 403),
			mattermost.Config{Channel: "random"}, "HTTP 403", "Lock to this channel"},
		{404, appErr("web.incoming_webhook.channel.app_error", "Couldn't find the channel.", 404), mattermost.Config{Channel: "nas"}, "Couldn't find the channel.", "town-square"},
		{501, appErr("web.incoming_webhook.disabled.app_error", "Incoming webhooks have been disabled by the system admin.", 501), mattermost.Config{},
			"HTTP 501", "Enable Incoming Webhooks"},
		{403, appErr("api.post.post_priority.priority_post_not_allowed_for_user.request_error", "You do not have the appropriate permissions.", 403),
			mattermost.Config{Priority: true}, "HTTP 403", "set priority: false"},
		{429, `{"message":"too many requests"}`, mattermost.Config{}, "HTTP 429", "retries by itself"},
	} {
		s := notifytest.StartHTTP(t, "")
		s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		})
		tc.cfg.WebhookURL = config.Secret{Value: s.URL + "/hooks/SeCrEtKeY"}
		ch := notifytest.BuildOne(t, mmChannel(tc.cfg))
		err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "mm-4")))
		if err == nil || !strings.Contains(err.Error(), tc.inErr) || strings.Contains(err.Error(), "SeCrEtKeY") {
			t.Errorf("HTTP %d: err %v", tc.status, err)
			continue
		}
		if fix := ch.Fix(err); !strings.Contains(fix, tc.fix) {
			t.Errorf("HTTP %d %s: fix %q, want %q", tc.status, tc.inErr, fix, tc.fix)
		}
	}
}

func TestMattermostConfigErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		`{name: a, type: mattermost}`: "notify.channels[0].webhook_url: empty: create an incoming webhook",
		`{name: a, type: mattermost, webhook_url: "https://chat.example.net/api/v4/posts/SeCrEt"}`:           `webhook_url = "https://chat.example.net/…": is not an incoming webhook URL`,
		`{name: a, type: mattermost, webhook_url: "https://chat.example.net/hooks/k", channel: Town Square}`: `notify.channels[0].channel = "Town Square": use the channel's name as its URL shows it (e.g. town-square)`,
		`{name: a, type: mattermost, webhook_url: "https://chat.example.net/hooks/k", icon_url: "ftp://x"}`:  "notify.channels[0].icon_url",
		`{name: a, type: mattermost, webhook_url: "https://chat.example.net/hooks/k", priority: maybe}`:      `notify.channels[0].priority = "maybe": must be true or false`,
		`{name: a, type: mattermost, webhook_url: "https://chat.example.net/hooks/k", token: x}`:             "not used by type mattermost (its keys: webhook_url, channel, username, icon_url, priority)",
	} {
		_, err := config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  channels:\n    - "+yaml+"\n"), catalog.Config())
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "SeCrEt") {
			t.Errorf("%s:\n  got  %v\n  want %q", yaml, err, want)
		}
	}
	for _, ok := range []string{"town-square", "#town-square", "@jane", "nas_alerts"} {
		y := "{name: a, type: mattermost, webhook_url: \"https://chat.example.net/hooks/k\", channel: \"" + ok + "\"}"
		if _, err := config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  channels:\n    - "+y+"\n"), catalog.Config()); err != nil {
			t.Errorf("channel %s refused: %v", ok, err)
		}
	}
}
