package notifiers

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/config"
)

func emailChannel(t testing.TB, name string, port int, mode, user, pass, caFile string, to ...string) config.ChannelConfig {
	t.Helper()
	if len(to) == 0 {
		to = []string{"ops@example.net", "Jane Admin <jane@example.org>"}
	}
	return config.ChannelConfig{
		Name: name, Type: config.ChannelEmail, From: "zwatch@nas1.example.net", To: to,
		SMTP: config.SMTPConfig{Host: "127.0.0.1", Port: port, TLS: mode, Username: user,
			Password: config.Secret{Value: pass}, CAFile: caFile},
	}
}

func notifyConfig(chs ...config.ChannelConfig) config.NotifyConfig {
	c := config.DefaultNotify()
	c.Console = false
	c.SendTimeout = config.Duration(5 * time.Second)
	c.Channels = chs
	return c
}

func buildOne(t testing.TB, cc config.ChannelConfig) Channel {
	t.Helper()
	chs, err := Build(notifyConfig(cc))
	if err != nil {
		t.Fatal(err)
	}
	return chs[0]
}

const guideText = "1. Run: zpool offline vault 9384718273645510293\n2. Pull the disk with serial WD-WX32D7088AF1 from bay 3 <left cage>"

func testGuide(a alert.Alert) string {
	if a.Replacement == nil {
		return ""
	}
	return guideText
}

// parsedMail is a received message taken apart with net/mail and mime/multipart.
type parsedMail struct {
	Subject, Text, HTML string
	Header              mail.Header
}

func parseMail(t testing.TB, raw []byte) parsedMail {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a mail message: %v\n%s", err, raw)
	}
	var dec mime.WordDecoder
	subj, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	p := parsedMail{Subject: subj, Header: msg.Header}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(part) // quoted-printable is decoded by the reader
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
		ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		switch ct {
		case "text/plain":
			p.Text = string(b)
		case "text/html":
			p.HTML = string(b)
		default:
			t.Errorf("unexpected part %s", ct)
		}
	}
	return p
}

func TestEmailSTARTTLSAuthMultipart(t *testing.T) {
	cert := newTestCert(t)
	sink := startSMTP(t, sinkStartTLS, &cert, "nas1", "s3cret pass", "")
	ch := buildOne(t, emailChannel(t, "ops-mail", sink.Port, "starttls", "nas1", "s3cret pass", cert.caFile))

	n := firingNotification("nas1", "n-42")
	m := RenderGuided(n, testGuide)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Send(ctx, m); err != nil {
		t.Fatalf("send: %v (fix: %s)", err, ch.Fix(err))
	}
	got := sink.all()
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
	p := parseMail(t, r.Data)
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
	for _, want := range []string{wantSubj, "Pool vault is DEGRADED", "smart_reallocated: 1392", "Replacement guide:", guideText} {
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
	cert := newTestCert(t)
	sink := startSMTP(t, sinkImplicit, &cert, "nas1", "pw", "")
	ch := buildOne(t, emailChannel(t, "mail465", sink.Port, "implicit", "nas1", "pw", cert.caFile, "ops@example.net"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Send(ctx, Render(firingNotification("nas1", "n-1"))); err != nil {
		t.Fatalf("send: %v", err)
	}
	r := <-sink.got
	if !r.TLS || r.AuthUser != "nas1" {
		t.Errorf("session TLS=%v user=%q", r.TLS, r.AuthUser)
	}
	if p := parseMail(t, r.Data); !strings.HasPrefix(p.Subject, "[CRITICAL] vault DEGRADED") {
		t.Errorf("subject %q", p.Subject)
	}
}

func TestEmailFailuresAndFixes(t *testing.T) {
	cert := newTestCert(t)
	implicit := startSMTP(t, sinkImplicit, &cert, "nas1", "pw", "")
	starttls := startSMTP(t, sinkStartTLS, &cert, "nas1", "pw", "")
	closed := freePort(t)
	cases := []struct {
		name string
		cc   config.ChannelConfig
		fix  string
	}{
		{"starttls against implicit port", emailChannel(t, "a", implicit.Port, "starttls", "nas1", "pw", cert.caFile), "implicit"},
		{"implicit against starttls port", emailChannel(t, "b", starttls.Port, "implicit", "nas1", "pw", cert.caFile), "starttls"},
		{"wrong password", emailChannel(t, "c", starttls.Port, "starttls", "nas1", "nope", cert.caFile), "password"},
		{"untrusted certificate", emailChannel(t, "d", starttls.Port, "starttls", "nas1", "pw", ""), "ca_file"},
		{"connection refused", emailChannel(t, "e", closed, "starttls", "nas1", "pw", cert.caFile), "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := notifyConfig(tc.cc)
			cfg.SendTimeout = config.Duration(2 * time.Second)
			res := Test(context.Background(), cfg, tc.cc.Name, SampleNotification("nas1"))
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
