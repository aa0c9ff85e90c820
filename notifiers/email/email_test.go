package email_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

func TestEmailSTARTTLSAuthMultipart(t *testing.T) {
	cert := notifytest.NewCert(t)
	sink := notifytest.StartSMTP(t, notifytest.SinkStartTLS, &cert, "nas1", "s3cret pass", "")
	ch := notifytest.BuildOne(t, notifytest.EmailChannel("ops-mail", sink.Port, "starttls", "nas1", "s3cret pass", cert.CAFile))

	n := notifytest.Firing("nas1", "n-42")
	m := notifiers.RenderGuided(n, notifytest.Guide)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Send(ctx, m); err != nil {
		t.Fatalf("send: %v (fix: %s)", err, ch.Fix(err))
	}
	got := sink.All()
	if len(got) != 1 {
		t.Fatalf("server got %d messages, want 1", len(got))
	}
	r := got[0]
	if !r.TLS && r.AuthUser == "" {
		t.Errorf("no TLS/auth on the session: %+v", r)
	}
	if r.AuthUser != "nas1" || r.AuthPass != "s3cret pass" {
		t.Errorf("AUTH PLAIN got %q/%q", r.AuthUser, r.AuthPass)
	}
	if r.From != "zwatch@nas1.example.net" {
		t.Errorf("MAIL FROM %q", r.From)
	}
	if want := []string{"ops@example.net", "jane@example.org"}; !slices.Equal(r.To, want) {
		t.Errorf("RCPT TO %v, want %v", r.To, want)
	}
	p := notifytest.ParseMail(t, r.Data)
	wantSubj := "[CRITICAL] vault DEGRADED — disk WD-WX32D7088AF1 FAULTED, raidz2-0 can lose 1 more disk"
	if p.Subject != wantSubj {
		t.Errorf("Subject = %q, want %q", p.Subject, wantSubj)
	}
	if to := p.Header.Get("To"); !strings.Contains(to, "ops@example.net") || !strings.Contains(to, "jane@example.org") {
		t.Errorf("To header %q", to)
	}
	if id := p.Header.Get("Message-Id"); id != "<n-42@zwatch.nas1>" {
		t.Errorf("Message-ID %q", id)
	}
	if p.Header.Get("Importance") == "" {
		t.Errorf("critical mail has no Importance header")
	}
	for _, want := range []string{wantSubj, "Pool vault is DEGRADED", "smart_reallocated: 1392", "Replacement guide:", notifytest.GuideText} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("text part lacks %q:\n%s", want, p.Text)
		}
	}
	if first, _, _ := strings.Cut(p.Text, "\n"); strings.TrimSpace(first) != wantSubj {
		t.Errorf("first line %q is not the summary", first)
	}
	for _, want := range []string{"<strong>" + htmlEsc(wantSubj) + "</strong>", "smart_reallocated", "Replacement guide", "bay 3 &lt;left cage&gt;"} {
		if !strings.Contains(p.HTML, want) {
			t.Errorf("HTML part lacks %q:\n%s", want, p.HTML)
		}
	}
}

func htmlEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestEmailImplicitTLS(t *testing.T) {
	cert := notifytest.NewCert(t)
	sink := notifytest.StartSMTP(t, notifytest.SinkImplicit, &cert, "nas1", "pw", "")
	ch := notifytest.BuildOne(t, notifytest.EmailChannel("mail465", sink.Port, "implicit", "nas1", "pw", cert.CAFile, "ops@example.net"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Send(ctx, notifiers.Render(notifytest.Firing("nas1", "n-1"))); err != nil {
		t.Fatalf("send: %v", err)
	}
	r := <-sink.Got
	if !r.TLS || r.AuthUser != "nas1" {
		t.Errorf("session TLS=%v user=%q", r.TLS, r.AuthUser)
	}
	if p := notifytest.ParseMail(t, r.Data); !strings.HasPrefix(p.Subject, "[CRITICAL] vault DEGRADED") {
		t.Errorf("subject %q", p.Subject)
	}
}

func TestEmailFailuresAndFixes(t *testing.T) {
	cert := notifytest.NewCert(t)
	implicit := notifytest.StartSMTP(t, notifytest.SinkImplicit, &cert, "nas1", "pw", "")
	starttls := notifytest.StartSMTP(t, notifytest.SinkStartTLS, &cert, "nas1", "pw", "")
	closed := notifytest.FreePort(t)
	cases := []struct {
		name string
		cc   config.ChannelConfig
		fix  string
	}{
		{"starttls against implicit port", notifytest.EmailChannel("a", implicit.Port, "starttls", "nas1", "pw", cert.CAFile), "implicit"},
		{"implicit against starttls port", notifytest.EmailChannel("b", starttls.Port, "implicit", "nas1", "pw", cert.CAFile), "starttls"},
		{"wrong password", notifytest.EmailChannel("c", starttls.Port, "starttls", "nas1", "nope", cert.CAFile), "password"},
		{"untrusted certificate", notifytest.EmailChannel("d", starttls.Port, "starttls", "nas1", "pw", ""), "ca_file"},
		{"connection refused", notifytest.EmailChannel("e", closed, "starttls", "nas1", "pw", cert.CAFile), "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := notifytest.NotifyConfig(tc.cc)
			cfg.SendTimeout = config.Duration(2 * time.Second)
			res := notifiers.Test(context.Background(), cfg, tc.cc.Name, notifiers.SampleNotification("nas1"))
			if len(res) != 1 || res[0].Delivered || res[0].Err == nil {
				t.Fatalf("results %+v", res)
			}
			if !strings.Contains(res[0].Fix, tc.fix) {
				t.Errorf("fix %q does not mention %q (err: %v)", res[0].Fix, tc.fix, res[0].Err)
			}
			if strings.Contains(res[0].Err.Error(), "nope") {
				t.Errorf("error reveals the password: %v", res[0].Err)
			}
		})
	}
}

func TestEmailFixHints(t *testing.T) {
	ch := notifytest.BuildOne(t, notifytest.EmailChannel("m", 25, "starttls", "", "", ""))
	refused := &notifytest.URLishErr{Err: notifytest.RefusedErr()}
	if fix := ch.Fix(refused); !strings.Contains(fix, "port 25") || !strings.Contains(fix, "587") {
		t.Errorf("port 25 fix %q", fix)
	}
	if fix := ch.Fix(notifytest.DNSErr("smtp.exmaple.com")); !strings.Contains(fix, "does not resolve") || !strings.Contains(fix, "smtp.host") {
		t.Errorf("dns fix %q", fix)
	}
}

// The probe asks the server without sending mail: it passes against a
// server that takes the login, and fails, naming the server and without
// the password, against a wrong password or a port nobody listens on.
func TestEmailProbe(t *testing.T) {
	cert := notifytest.NewCert(t)
	sink := notifytest.StartSMTP(t, notifytest.SinkStartTLS, &cert, "nas1", "s3cret pass", "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	ch := notifytest.BuildOne(t, notifytest.EmailChannel("ops-mail", sink.Port, "starttls", "nas1", "s3cret pass", cert.CAFile))
	if has, err := ch.Probe(ctx); !has || err != nil {
		t.Fatalf("probe of a working server: has %v, err %v", has, err)
	}
	if got := len(sink.All()); got != 0 {
		t.Errorf("the probe sent %d mails", got)
	}
	if sink.Connections() != 1 {
		t.Errorf("%d connections for one probe", sink.Connections())
	}

	wrong := notifytest.BuildOne(t, notifytest.EmailChannel("ops-mail", sink.Port, "starttls", "nas1", "wrong pass", cert.CAFile))
	_, err := wrong.Probe(ctx)
	if err == nil || strings.Contains(err.Error(), "wrong pass") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("probe with a wrong password: %v", err)
	}

	down := notifytest.BuildOne(t, notifytest.EmailChannel("ops-mail", notifytest.FreePort(t), "starttls", "nas1", "s3cret pass", cert.CAFile))
	if _, err := down.Probe(ctx); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("probe of a port nobody listens on: %v", err)
	}
}
