package delivery_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

var linkRE = regexp.MustCompile(`https://nas\.example\.net:8931/answer\?t=([A-Za-z0-9._-]+)`)

// With Options.Links a page carries, under its summary, one link to
// acknowledge and one to snooze its incident, each a token this install
// signed for that host and incident; the resolved notice carries none.
func TestPagesCarryAnswerLinks(t *testing.T) {
	cert := notifytest.NewCert(t)
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	sink := notifytest.StartSMTP(t, notifytest.SinkStartTLS, &cert, "nas1", "pw", "")
	cfg := notifytest.NotifyConfig(notifytest.EmailChannel("mail", sink.Port, "starttls", "nas1", "pw", cert.CAFile, "ops@example.net"))
	key := answer.Key([]byte("0123456789abcdef0123456789abcdef"))
	notifytest.RunNotifiers(t, b, cfg, delivery.Options{Links: &delivery.Links{URL: "https://nas.example.net:8931/answer", Key: key}})

	page := notifytest.Firing("nas1", "page-1")
	page.Alerts[0].Incident = "3f2a9c1e"
	notifytest.Publish(t, b, page)
	notifytest.WaitFor(t, 10*time.Second, "the page", func() bool { return len(sink.All()) >= 1 })
	m := notifytest.ParseMail(t, sink.All()[0].Data)
	lines := strings.Split(m.Text, "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[2], "Answer on the status page") ||
		!strings.HasPrefix(lines[3], "  Acknowledge: https://") || !strings.HasPrefix(lines[4], "  Snooze 24 h: https://") {
		t.Fatalf("the links are not under the summary:\n%s", m.Text)
	}
	verbs := map[string]bool{}
	for _, sm := range linkRE.FindAllStringSubmatch(m.Text, -1) {
		tok, _ := url.QueryUnescape(sm[1])
		l, err := key.VerifyLink(tok, time.Now())
		if err != nil || l.Incident != "3f2a9c1e" || l.Host != "nas1" || l.Expires.Sub(time.Now()) < answer.LinkFor-time.Minute {
			t.Errorf("link %q: %+v, %v", tok, l, err)
		}
		verbs[l.Verb] = true
	}
	if !verbs[answer.Ack] || !verbs[answer.Snooze] {
		t.Errorf("verbs %v, want ack and snooze", verbs)
	}
	if hl := linkRE.FindAllString(html.UnescapeString(m.HTML), -1); len(hl) != 2 {
		t.Errorf("the HTML part has %d answer links, want 2:\n%s", len(hl), m.HTML)
	}

	end := time.Now()
	resolved := notifytest.Firing("nas1", "resolved-1")
	resolved.Alerts[0].Incident = "3f2a9c1e"
	resolved.Alerts[0].State, resolved.Alerts[0].EndsAt, resolved.Status = alert.Resolved, &end, alert.Resolved
	notifytest.Publish(t, b, resolved)
	notifytest.WaitFor(t, 10*time.Second, "the resolved notice", func() bool { return len(sink.All()) >= 2 })
	if r := notifytest.ParseMail(t, sink.All()[1].Data); strings.Contains(r.Text, "/answer?t=") {
		t.Errorf("the resolved notice carries answer links:\n%s", r.Text)
	}
}
