package notifiers

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/config"
)

func TestRenderSummaryAndResolved(t *testing.T) {
	n := firingNotification("nas1", "r-1")
	m := Render(n)
	if m.Summary != wantSummary {
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
	m = Render(n)
	if m.Summary != wantSummary+" (+1 more)" {
		t.Errorf("grouped summary %q", m.Summary)
	}
	if !strings.Contains(m.Text, "● WARNING  tank 91% full") {
		t.Errorf("grouped text lacks the second alert:\n%s", m.Text)
	}

	// Resolved notice.
	r := firingNotification("nas1", "r-2")
	end := r.Alerts[0].StartsAt.Add(2*time.Hour + 13*time.Minute)
	r.Alerts[0].State, r.Alerts[0].EndsAt, r.Status = alert.Resolved, &end, alert.Resolved
	m = RenderGuided(r, testGuide)
	if !m.Resolved || m.Summary != "[RESOLVED] vault DEGRADED — disk WD-WX32D7088AF1 FAULTED, raidz2-0 can lose 1 more disk" {
		t.Errorf("resolved summary %q", m.Summary)
	}
	if !strings.Contains(m.Text, "lasted 2h13m0s") || m.Title != "zwatch nas1: resolved" {
		t.Errorf("resolved text:\n%s\ntitle %q", m.Text, m.Title)
	}
	if strings.Contains(m.Text, "Replacement guide") {
		t.Error("resolved notice carries the replacement guide")
	}

	// A test send says so on the lock screen.
	if s := Render(SampleNotification("nas1")).Summary; !strings.HasPrefix(s, "[TEST] [CRITICAL] vault DEGRADED") {
		t.Errorf("test summary %q", s)
	}
}

func TestRenderSurvivesPanickingGuide(t *testing.T) {
	m := RenderGuided(firingNotification("nas1", "x"), func(alert.Alert) string { panic("boom") })
	if m.Summary != wantSummary {
		t.Errorf("summary %q", m.Summary)
	}
}

func TestRenderHTMLEscapes(t *testing.T) {
	n := firingNotification("nas1", "x")
	n.Alerts[0].Description = `<script>alert(1)</script>`
	if m := Render(n); strings.Contains(m.HTML, "<script>") {
		t.Errorf("HTML not escaped: %s", m.HTML)
	}
}

func TestCutters(t *testing.T) {
	s := strings.Repeat("é🙂", 10) // é: 1 rune/2 bytes/1 unit, 🙂: 1 rune/4 bytes/2 units
	if got := cutRunes(s, 5); utf8.RuneCountInString(got) != 5 || !strings.HasSuffix(got, "…") {
		t.Errorf("cutRunes %q", got)
	}
	if got := cutBytes(s, 11); len(got) > 11 || !utf8.ValidString(got) {
		t.Errorf("cutBytes %q (%d bytes)", got, len(got))
	}
	if got := cutUTF16(s, 7); len(utf16.Encode([]rune(got))) > 7 || !utf8.ValidString(got) {
		t.Errorf("cutUTF16 %q", got)
	}
	if cutRunes("short", 10) != "short" {
		t.Error("short string changed")
	}
}

// TestLengthLimits sends a notification far over every limit to each
// service and checks what arrives fits, with the summary line intact.
func TestLengthLimits(t *testing.T) {
	n := firingNotification("nas1", "big")
	n.Alerts[0].Description = strings.Repeat("Disk WD-WX32D7088AF1 logged another error 🙂. ", 1500) // ~70 kB
	long := strings.Repeat("x", 400)
	n.Alerts[0].Summary = "vault DEGRADED " + long

	s := startHTTP(t, `{"ok":true,"status":1}`)
	chans := []config.ChannelConfig{
		{Name: "po", Type: config.ChannelPushover, APIURL: s.URL + "/pushover", Token: config.Secret{Value: "t"}, User: config.Secret{Value: "u"}},
		{Name: "tg", Type: config.ChannelTelegram, APIURL: s.URL + "/tg", Token: config.Secret{Value: "1:a"}, ChatIDs: []string{"1"}},
		{Name: "dc", Type: config.ChannelDiscord, WebhookURL: config.Secret{Value: s.URL + "/discord"}},
		{Name: "sl", Type: config.ChannelSlack, WebhookURL: config.Secret{Value: s.URL + "/slack"}},
		{Name: "nt", Type: config.ChannelNtfy, URL: s.URL + "/ntfy", Topic: "t"},
	}
	m := Render(n)
	for _, cc := range chans {
		ch := buildOne(t, cc)
		if err := ch.Send(context.Background(), m); err != nil {
			t.Fatalf("%s: %v", cc.Name, err)
		}
	}
	for _, h := range s.all() {
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
			text, _ = h.json(t)["text"].(string)
			if c := len(utf16.Encode([]rune(text))); c > 4096 {
				t.Errorf("telegram text %d UTF-16 units > 4096", c)
			}
		case strings.HasPrefix(h.Path, "/discord"):
			text, _ = h.json(t)["content"].(string)
			if c := utf8.RuneCountInString(text); c > 2000 {
				t.Errorf("discord content %d chars > 2000", c)
			}
		case strings.HasPrefix(h.Path, "/slack"):
			text, _ = h.json(t)["text"].(string)
			if c := utf8.RuneCountInString(text); c > 40000 {
				t.Errorf("slack text %d chars > 40000", c)
			}
		case strings.HasPrefix(h.Path, "/ntfy"):
			text, _ = h.json(t)["message"].(string)
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
	if len(s.all()) != len(chans) {
		t.Errorf("%d requests for %d channels", len(s.all()), len(chans))
	}
}

func TestSelect(t *testing.T) {
	base := Channel{Name: "ops", MinSeverity: alert.Warning, SendResolved: true}
	crit := firingNotification("nas1", "s")
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
	dl := alert.Notification{ID: "d", Alerts: []alert.Alert{{Name: DeadLetterAlert, Severity: alert.Warning, State: alert.Firing, Labels: map[string]string{"channel": "ops"}}}}
	if _, ok := base.Select(dl); ok {
		t.Error("a channel received the report of its own dead letter")
	}
	other := base
	other.Name = "phone"
	if _, ok := other.Select(dl); !ok {
		t.Error("other channel did not receive the dead-letter report")
	}
}

func TestFixHints(t *testing.T) {
	ch := buildOne(t, emailChannel(t, "m", 25, "starttls", "", "", ""))
	refused := &urlishErr{syscallRefused()}
	if fix := ch.Fix(refused); !strings.Contains(fix, "port 25") || !strings.Contains(fix, "587") {
		t.Errorf("port 25 fix %q", fix)
	}
	if fix := ch.Fix(dnsErr("smtp.exmaple.com")); !strings.Contains(fix, "does not resolve") || !strings.Contains(fix, "smtp.host") {
		t.Errorf("dns fix %q", fix)
	}
	tg := Channel{Type: config.ChannelTelegram}
	if fix := tg.Fix(&ServiceError{Service: "telegram", Status: 401, Detail: "Unauthorized"}); !strings.Contains(fix, "BotFather") {
		t.Errorf("telegram 401 fix %q", fix)
	}
}
