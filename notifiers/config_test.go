package notifiers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/email"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

// These exercise config/notify.go and the service folders' settings through
// config.Parse, as zwatch loads them.

func parseConfig(t *testing.T, y string) (*config.Loaded, error) {
	t.Helper()
	return config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\n"+y), catalog.Config())
}

func TestConfigNotifyDefaults(t *testing.T) {
	l, err := parseConfig(t, "")
	if err != nil {
		t.Fatal(err)
	}
	n := l.Config.Notify
	if !n.Console || n.RetryFor.D() != 7*24*time.Hour || n.RetryInitial.D() != 10*time.Second || n.RetryMax.D() != time.Hour {
		t.Errorf("defaults %+v", n)
	}
}

func TestConfigNotifyFull(t *testing.T) {
	t.Setenv("ZW_SMTP_PASS", "from-env")
	pw := filepath.Join(t.TempDir(), "tg")
	if err := os.WriteFile(pw, []byte("123:ABC\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := parseConfig(t, `
notify:
  console: false
  retry_for: 3d
  channels:
    - name: ops-mail
      type: email
      min_severity: critical
      route: {pools: [vault], alerts: ["Zpool*"]}
      smtp: {host: smtp.example.net, port: 465, tls: implicit, username: nas1, password: "${ZW_SMTP_PASS}"}
      from: zwatch@example.net
      to: [ops@example.net, "Jane <jane@example.org>"]
    - {name: phone, type: pushover, token: azGDORePK8gMaC0QOYAMyEEuzJnyUi, user: uQiRzpo4DXghDmr9QzzfQu27cmVRsG}
    - {name: tg, type: telegram, token: "file:`+pw+`", chat_ids: ["-1001234567890", "@nas"]}
    - {name: ntfy, type: ntfy, topic: nas1-x}
    - {name: gotify, type: gotify, url: "https://gotify.example.net", token: Axyz}
    - {name: dc, type: discord, webhook_url: "https://discord.com/api/webhooks/1/abc"}
    - {name: sl, type: slack, token: xoxb-1, channel: C123}
    - {name: hook, type: webhook, url: "https://example.net/hook", headers: {Authorization: "Bearer x"}, send_resolved: false}
    - {name: mm, type: mattermost, webhook_url: "https://chat.example.net/hooks/mmkey123", channel: nas, username: zwatch, icon_url: "https://example.net/i.png", priority: true}
    - {name: teams, type: teams, webhook_url: "https://prod-1.westus.logic.azure.com/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=teamssig123"}
    - {name: mx, type: matrix, homeserver: "https://matrix.example.net", access_token: syt_matrix123, room: "#nas:example.net"}
    - {name: run, type: exec, command: [/usr/local/bin/page-me, --urgent], timeout: 10s, env: {PAGER_TOKEN: exec-secret-123}}
`)
	if err != nil {
		t.Fatal(err)
	}
	n := l.Config.Notify
	if n.Console || n.RetryFor.D() != 72*time.Hour || len(n.Channels) != 12 {
		t.Fatalf("%+v", n)
	}
	mail, _ := n.Channels[0].Settings.(email.Config)
	tg, _ := n.Channels[2].Settings.(telegram.Config)
	if mail.SMTP.Password.Value != "from-env" || tg.Token.Value != "123:ABC" {
		t.Error("secrets not resolved")
	}
	if n.Channels[7].Resolved() || !n.Channels[0].Resolved() {
		t.Error("send_resolved")
	}
	chs, err := notifiers.Build(n)
	if err != nil || len(chs) != 12 {
		t.Fatalf("Build: %v (%d)", err, len(chs))
	}
	masked, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"from-env", "azGDORePK8", "123:ABC", "Bearer x", "webhooks/1/abc", "mmkey123", "teamssig123", "syt_matrix123", "exec-secret-123"} {
		if strings.Contains(string(masked), secret) {
			t.Errorf("Masked() shows %q", secret)
		}
	}
	// Every key of every channel is printed, common and its type's own.
	for _, key := range []string{"name: ops-mail", "min_severity: critical", "send_resolved:", "pools:", "smtp:", "host: smtp.example.net",
		"port: 465", "tls: implicit", "username: nas1", "password: '****** (from ${ZW_SMTP_PASS})'", "ca_file:", "from: zwatch@example.net",
		"user: '******'", "chat_ids:", "topic: nas1-x", "webhook_url: '******'", "channel: C123", "api_url:", "Authorization: '******'",
		"username: zwatch", "icon_url: https://example.net/i.png", "priority: true", "homeserver: https://matrix.example.net", "access_token: '******'",
		"room: '#nas:example.net'", "- /usr/local/bin/page-me", "timeout: 10s", "PAGER_TOKEN: '******'"} {
		if !strings.Contains(string(masked), key) {
			t.Errorf("Masked() lacks %q:\n%s", key, masked)
		}
	}
}

func TestConfigNotifyLiteralSecretWarns(t *testing.T) {
	for _, tc := range []struct{ channel, warn string }{
		{`{name: a, type: pushover, token: literal-token, user: "${ZW_PO_USER}"}`, "chmod 600"},
		{`{name: a, type: pushover, token: "${ZW_PO_USER}", user: "${ZW_PO_USER}"}`, ""},
		{`{name: a, type: webhook, url: "https://x", headers: {Authorization: "Bearer x"}}`, "chmod 600"},
		{`{name: a, type: email, smtp: {host: h, username: u, password: pw}, from: a@b.c, to: [x@y.z]}`, "chmod 600"},
	} {
		t.Setenv("ZW_PO_USER", "u")
		path := filepath.Join(t.TempDir(), "zwatch.yaml")
		if err := os.WriteFile(path, []byte("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  channels:\n    - "+tc.channel+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := config.Load(path, catalog.Config())
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(l.Warnings, "\n")
		if tc.warn == "" && got != "" || !strings.Contains(got, tc.warn) {
			t.Errorf("%s: warnings %q, want %q", tc.channel, got, tc.warn)
		}
	}
}

func TestConfigNotifyErrors(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{`{name: a, type: email, smtp: {host: h}, from: a@b.c}`, "notify.channels[0].to: empty: add at least one recipient"},
		{`{name: a, type: sms}`, `notify.channels[0].type = "sms": must be one of email, pushover`},
		{`{name: a, type: email, smtp: {host: h, port: 465}, from: a@b.c, to: [x@y.z]}`, "notify.channels[0].smtp.tls"},
		{`{name: a, type: email, smtp: {host: h, tls: implicit, port: 587}, from: a@b.c, to: [x@y.z]}`, "set tls: starttls"},
		{`{name: a, type: email, smtp: {host: h, username: u}, from: a@b.c, to: [x@y.z]}`, "username and password go together"},
		{`{name: a, type: email, smtp: {host: h}, from: a@b.c, to: [not-an-address]}`, "notify.channels[0].to[0]"},
		{`{name: a, type: pushover, token: t}`, "notify.channels[0].user: empty"},
		{`{name: a, type: telegram, token: "1:a", chat_ids: [abc]}`, "notify.channels[0].chat_ids[0]"},
		{`{name: a, type: ntfy, topic: "a/b"}`, "notify.channels[0].topic"},
		{`{name: a, type: gotify, token: t}`, "notify.channels[0].url: empty"},
		{`{name: a, type: discord, webhook_url: "ftp://secretpath/x"}`, "notify.channels[0].webhook_url"},
		{`{name: a, type: slack}`, "set webhook_url, or token and channel"},
		{`{name: a, type: slack, token: xoxb-1}`, "notify.channels[0].channel: empty"},
		{`{name: a, type: webhook, url: "https://x", topic: t}`, "notify.channels[0].topic: not used by type webhook (its keys: url, headers)"},
		{`{name: a, type: discord, webhook_url: "https://d/x", smtp: {host: h}}`, "notify.channels[0].smtp: not used by type discord (its keys: webhook_url)"},
		{`{name: a, type: webhook, url: "https://x", to: 5}`, `notify.channels[0].to = "5": must be a list`},
		{`{name: a, type: email, smtp: {host: h, port: x}, from: a@b.c, to: [x@y.z]}`, `notify.channels[0].smtp.port = "x": must be a whole number`},
		{`{name: a, type: email, smtp: {host: h, prot: 25}, from: a@b.c, to: [x@y.z]}`, `notify.channels[0].smtp.prot: unknown key (line 5): did you mean "port"?`},
		{`{name: a, type: telegram, token: "1:a", chat_ids: "5"}`, `notify.channels[0].chat_ids = "5": must be a list (- item lines), not a single value`},
		{`{name: a, type: webhook, url: "https://x", send_resolved: maybe}`, `notify.channels[0].send_resolved = "maybe": must be true or false`},
		{`{name: a, type: webhook, url: "https://x", route: {pool: [x]}}`, `notify.channels[0].route.pool: unknown key (line 5): did you mean "pools"?`},
		{`{name: a, type: webhook, url: "https://x", url: "https://y"}`, "notify.channels[0].url: given twice (lines 5 and 5): keep one"},
		{`just-a-name`, `notify.channels[0] = "just-a-name": must be a mapping (key: value lines), not a single value; valid keys here: access_token, answer_numbers, answer_users, api_key, api_url, broker, ca_file, channel, chat_ids, client_id, client_url, command, devices, discovery_prefix, emergency, env, from, headers, homeserver, icon_url, min_severity, name, number, password, priority, qos, quiet, recipients, room, route, routing_key, send_resolved, smtp, text_mode, timeout, to, token, topic, topic_prefix, type, url, user, username, webhook_url`},
		{`{name: a, type: webhook, url: "https://x", min_severity: loud}`, "notify.channels[0].min_severity"},
		{`{name: a, type: webhook, url: "https://x", route: {alerts: ["[bad"]}}`, "notify.channels[0].route.alerts[0]"},
		{`{name: console, type: webhook, url: "https://x"}`, "reserved"},
		{`{type: webhook, url: "https://x"}`, "notify.channels[0].name: empty"},
		{`{name: a, type: webhook, url: "https://x", tokn: x}`, `notify.channels[0].tokn: unknown key (line 5): did you mean "token"?`},
		{`{name: a, type: webhook, url: "https://x", token: "${ZW_NOT_SET_ANYWHERE}"}`, "ZW_NOT_SET_ANYWHERE is not set"},
	}
	for _, tc := range cases {
		_, err := parseConfig(t, "notify:\n  channels:\n    - "+tc.yaml+"\n")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n  got  %v\n  want %q", tc.yaml, err, tc.want)
		}
	}
	_, err := parseConfig(t, "notify:\n  channels:\n    - {name: a b, type: webhook, url: \"https://x\"}\n    - {name: a_b, type: webhook, url: \"https://y\"}\n")
	if err == nil || !strings.Contains(err.Error(), "notify.channels[1].name") {
		t.Errorf("clashing names: %v", err)
	}
	_, err = parseConfig(t, "hots: nas1\nnotify:\n  channels:\n    - {name: a, type: webhook, url: \"https://x\", tokn: x}\n")
	if err == nil || !strings.Contains(err.Error(), "hots: unknown key") || !strings.Contains(err.Error(), "notify.channels[0].tokn") {
		t.Errorf("a channel's unknown key is not reported with the file's: %v", err)
	}
	_, err = parseConfig(t, "notify:\n  retry_for: 0s\n")
	if err == nil || !strings.Contains(err.Error(), "notify.retry_for") {
		t.Errorf("retry_for: %v", err)
	}
	_, err = parseConfig(t, "notify:\n  channels:\n    - {name: a, type: discord, webhook_url: \"ftp://host/secretpath\"}\n")
	if err != nil && strings.Contains(err.Error(), "secretpath") {
		t.Errorf("error shows the webhook secret: %v", err)
	}
}
