package notifiers_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/discord"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/ntfy"
	"github.com/zwatch/zwatch/notifiers/pushover"
	"github.com/zwatch/zwatch/notifiers/slack"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

func TestRenderSummaryAndResolved(t *testing.T) {
	n := notifytest.Firing("nas1", "r-1")
	m := notifiers.Render(n)
	if m.Summary != notifytest.WantSummary {
		t.Errorf("summary %q", m.Summary)
	}
	if m.Resolved || m.Severity != alert.Critical {
		t.Errorf("resolved=%v severity=%s", m.Resolved, m.Severity)
	}
	if strings.Contains(m.Text, "Replacement guide") {
		t.Error("guide rendered without a GuideFunc")
	}

	// Two firing alerts: the worst leads, the count follows.
	warn := alert.Alert{Name: "ZpoolCapacity", Severity: alert.Warning, State: alert.Firing,
		Summary: "tank 91% full", Labels: map[string]string{"pool": "tank"}}
	n.Alerts = append([]alert.Alert{warn}, n.Alerts...)
	m = notifiers.Render(n)
	if m.Summary != notifytest.WantSummary+" (+1 more)" {
		t.Errorf("grouped summary %q", m.Summary)
	}
	if !strings.Contains(m.Text, "● WARNING  tank 91% full") {
		t.Errorf("grouped text lacks the second alert:\n%s", m.Text)
	}

	// Resolved notice.
	r := notifytest.Firing("nas1", "r-2")
	end := r.Alerts[0].StartsAt.Add(2*time.Hour + 13*time.Minute)
	r.Alerts[0].State, r.Alerts[0].EndsAt, r.Status = alert.Resolved, &end, alert.Resolved
	m = notifiers.RenderGuided(r, notifytest.Guide)
	if !m.Resolved || m.Summary != "[RESOLVED] vault DEGRADED — disk WD-WX32D7088AF1 FAULTED, raidz2-0 can lose 1 more disk" {
		t.Errorf("resolved summary %q", m.Summary)
	}
	// An info alert that joined the incident later (the resilver, told on
	// its own) is in the body but not in the count: the resolved notice's
	// "+N more" is the page's.
	resilver := alert.Alert{Name: "Resilvering", Severity: alert.Info, State: alert.Resolved, EndsAt: &end,
		Summary: "pool vault: resilver finished with 0 error(s)", Labels: map[string]string{"pool": "vault"}}
	withInfo := r
	withInfo.Alerts = append(append([]alert.Alert(nil), r.Alerts...), resilver)
	if got := notifiers.Render(withInfo); got.Summary != m.Summary || !strings.Contains(got.Text, "resilver finished") {
		t.Errorf("resolved with a later info alert: summary %q (want %q), text:\n%s", got.Summary, m.Summary, got.Text)
	}
	onlyInfo := alert.Notification{Host: "nas1", Status: alert.Resolved, Alerts: []alert.Alert{resilver, resilver}}
	if got := notifiers.Render(onlyInfo).Summary; !strings.HasSuffix(got, "(+1 more)") {
		t.Errorf("two info alerts: summary %q, want them counted", got)
	}
	if !strings.Contains(m.Text, "lasted 2h13m0s") || m.Title != "zwatch nas1: resolved" {
		t.Errorf("resolved text:\n%s\ntitle %q", m.Text, m.Title)
	}
	if strings.Contains(m.Text, "Replacement guide") {
		t.Error("resolved notice carries the replacement guide")
	}

	// A test send says so on the lock screen.
	if s := notifiers.Render(notifiers.SampleNotification("nas1")).Summary; !strings.HasPrefix(s, "[TEST] [CRITICAL] vault DEGRADED") {
		t.Errorf("test summary %q", s)
	}
}

func TestRenderSurvivesPanickingGuide(t *testing.T) {
	m := notifiers.RenderGuided(notifytest.Firing("nas1", "x"), func(alert.Alert) string { panic("boom") })
	if m.Summary != notifytest.WantSummary {
		t.Errorf("summary %q", m.Summary)
	}
}

func TestRenderHTMLEscapes(t *testing.T) {
	n := notifytest.Firing("nas1", "x")
	n.Alerts[0].Description = `<script>alert(1)</script>`
	if m := notifiers.Render(n); strings.Contains(m.HTML, "<script>") {
		t.Errorf("HTML not escaped: %s", m.HTML)
	}
}

// TestLengthLimits sends a notification far over every limit to each
// service and checks what arrives fits, with the summary line intact.
func TestLengthLimits(t *testing.T) {
	n := notifytest.Firing("nas1", "big")
	n.Alerts[0].Description = strings.Repeat("Disk WD-WX32D7088AF1 logged another error 🙂. ", 1500) // ~70 kB
	long := strings.Repeat("x", 400)
	n.Alerts[0].Summary = "vault DEGRADED " + long

	s := notifytest.StartHTTP(t, `{"ok":true,"status":1}`)
	chans := []config.ChannelConfig{
		{Name: "po", Type: "pushover", Settings: pushover.Config{APIURL: s.URL + "/pushover", Token: config.Secret{Value: "t"}, User: config.Secret{Value: "u"}}},
		{Name: "tg", Type: "telegram", Settings: telegram.Config{APIURL: s.URL + "/tg", Token: config.Secret{Value: "1:a"}, ChatIDs: []string{"1"}}},
		{Name: "dc", Type: "discord", Settings: discord.Config{WebhookURL: config.Secret{Value: s.URL + "/discord"}}},
		{Name: "sl", Type: "slack", Settings: slack.Config{WebhookURL: config.Secret{Value: s.URL + "/slack"}}},
		{Name: "nt", Type: "ntfy", Settings: ntfy.Config{URL: s.URL + "/ntfy", Topic: "t"}},
	}
	m := notifiers.Render(n)
	for _, cc := range chans {
		ch := notifytest.BuildOne(t, cc)
		if err := ch.Send(context.Background(), m); err != nil {
			t.Fatalf("%s: %v", cc.Name, err)
		}
	}
	for _, h := range s.All() {
		var text string
		switch {
		case strings.HasPrefix(h.Path, "/pushover"):
			f, _ := url.ParseQuery(string(h.Body))
			text = f.Get("message")
			if c := utf8.RuneCountInString(text); c > 1024 {
				t.Errorf("pushover message %d chars > 1024", c)
			}
			if c := utf8.RuneCountInString(f.Get("title")); c > 250 {
				t.Errorf("pushover title %d chars > 250", c)
			}
		case strings.HasPrefix(h.Path, "/tg"):
			text, _ = h.JSON(t)["text"].(string)
			if c := len(utf16.Encode([]rune(text))); c > 4096 {
				t.Errorf("telegram text %d UTF-16 units > 4096", c)
			}
		case strings.HasPrefix(h.Path, "/discord"):
			text, _ = h.JSON(t)["content"].(string)
			if c := utf8.RuneCountInString(text); c > 2000 {
				t.Errorf("discord content %d chars > 2000", c)
			}
		case strings.HasPrefix(h.Path, "/slack"):
			text, _ = h.JSON(t)["text"].(string)
			if c := utf8.RuneCountInString(text); c > 40000 {
				t.Errorf("slack text %d chars > 40000", c)
			}
		case strings.HasPrefix(h.Path, "/ntfy"):
			text, _ = h.JSON(t)["message"].(string)
			if len(text) > 4096 {
				t.Errorf("ntfy message %d bytes > 4096", len(text))
			}
		}
		if !strings.HasSuffix(text, "…") {
			t.Errorf("%s: long text not cut with an ellipsis", h.Path)
		}
		if first, _, _ := strings.Cut(text, "\n"); first != m.Summary {
			t.Errorf("%s: first line is not the summary: %q", h.Path, first)
		}
		if !utf8.ValidString(text) {
			t.Errorf("%s: cut mid-character", h.Path)
		}
	}
	if len(s.All()) != len(chans) {
		t.Errorf("%d requests for %d channels", len(s.All()), len(chans))
	}
}

func TestSelect(t *testing.T) {
	base := notifiers.Channel{Name: "ops", MinSeverity: alert.Warning, SendResolved: true}
	crit := notifytest.Firing("nas1", "s")
	info := crit
	info.Alerts = []alert.Alert{{Name: "ScrubFinished", Severity: alert.Info, State: alert.Firing, Labels: map[string]string{"pool": "vault"}}}

	if _, ok := base.Select(info); ok {
		t.Error("info passed min_severity warning")
	}
	if _, ok := base.Select(crit); !ok {
		t.Error("critical dropped")
	}
	c := base
	c.Pools = []string{"tank"}
	if _, ok := c.Select(crit); ok {
		t.Error("vault alert passed route pools [tank]")
	}
	c.Pools = []string{"vault"}
	if _, ok := c.Select(crit); !ok {
		t.Error("vault alert dropped by route pools [vault]")
	}
	c = base
	c.Alerts = []string{"Smart*"}
	if _, ok := c.Select(crit); ok {
		t.Error("ZpoolVdevFaulted passed route alerts [Smart*]")
	}
	c.Alerts = []string{"Zpool*"}
	if _, ok := c.Select(crit); !ok {
		t.Error("glob Zpool* did not match")
	}
	res := crit
	res.Alerts = append([]alert.Alert(nil), crit.Alerts...)
	res.Alerts[0].State = alert.Resolved
	c = base
	c.SendResolved = false
	if _, ok := c.Select(res); ok {
		t.Error("resolved passed send_resolved: false")
	}
	dl := alert.Notification{ID: "d", Alerts: []alert.Alert{{Name: notifiers.DeadLetterAlert, Severity: alert.Warning, State: alert.Firing, Labels: map[string]string{"channel": "ops"}}}}
	if _, ok := base.Select(dl); ok {
		t.Error("a channel received the report of its own dead letter")
	}
	other := base
	other.Name = "phone"
	if _, ok := other.Select(dl); !ok {
		t.Error("other channel did not receive the dead-letter report")
	}
}
