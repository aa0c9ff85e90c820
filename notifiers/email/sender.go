package email

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Sender sends one mail per notification to every recipient of the channel.
type Sender struct {
	host     string
	port     int
	mode     string
	username string
	password string
	from     string
	to       []string
	tls      *tls.Config
	timeout  time.Duration
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
	_ channel.Prober    = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) (*Sender, error) {
	s := c.SMTP
	tc := &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("smtp.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("smtp.ca_file %s holds no PEM certificate", s.CAFile)
		}
		tc.RootCAs = pool
	}
	return &Sender{
		host: s.Host, port: s.DialPort(), mode: s.Mode(), username: s.Username, password: s.Password.Value,
		from: c.From, to: c.To, tls: tc, timeout: env.Timeout,
	}, nil
}

// Send mails m; a stable Message-ID lets mail stores fold the rare
// duplicate a crash between send and acknowledge can cause.
func (e *Sender) Send(ctx context.Context, m channel.Message) error {
	msg := mail.NewMsg()
	if err := msg.From(e.from); err != nil {
		return fmt.Errorf("from %q: %w", e.from, err)
	}
	if err := msg.To(e.to...); err != nil {
		return fmt.Errorf("to: %w", err)
	}
	msg.Subject(m.Summary)
	msg.SetDate()
	if m.ID != "" {
		msg.SetMessageIDWithValue(idToken(m.ID) + "@zwatch." + idToken(m.Host))
		msg.SetGenHeader("X-Zwatch-Notification", m.ID)
	} else {
		msg.SetMessageID()
	}
	if m.Severity == alert.Critical && !m.Resolved {
		msg.SetImportance(mail.ImportanceHigh)
	}
	msg.SetGenHeader(mail.HeaderXAutoResponseSuppress, "All")
	msg.SetBodyString(mail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)
	}

	c, err := e.client()
	if err != nil {
		return err
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return channel.Redact(fmt.Errorf("smtp %s:%d: %w", e.host, e.port, err), e.password)
	}
	return nil
}

// Probe asks the mail server whether it would take mail without sending
// any: connect, EHLO, STARTTLS or implicit TLS and AUTH as Send does, then
// NOOP and QUIT (RFC 5321 sections 4.1.1.9 and 4.1.1.10,
// https://www.rfc-editor.org/rfc/rfc5321#section-4.1.1.9). A server that
// then refuses the mail itself (451 after DATA) still fails the send.
func (e *Sender) Probe(ctx context.Context) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	sc, err := c.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return channel.Redact(fmt.Errorf("smtp %s:%d: %w", e.host, e.port, err), e.password)
	}
	defer func() { _ = sc.Close() }()
	if err := sc.Noop(); err != nil {
		return channel.Redact(fmt.Errorf("smtp %s:%d: NOOP: %w", e.host, e.port, err), e.password)
	}
	if err := sc.Quit(); err != nil {
		return channel.Redact(fmt.Errorf("smtp %s:%d: QUIT: %w", e.host, e.port, err), e.password)
	}
	return nil
}

// client is the go-mail client for the channel's server and TLS mode.
func (e *Sender) client() (*mail.Client, error) {
	opts := []mail.Option{mail.WithTimeout(e.timeout), mail.WithTLSConfig(e.tls)}
	switch e.mode {
	case TLSImplicit:
		opts = append(opts, mail.WithSSL())
	case TLSNone:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	}
	opts = append(opts, mail.WithPort(e.port))
	if e.username != "" {
		// Autodiscover picks the strongest mechanism the server offers
		// (PLAIN, LOGIN, CRAM-MD5, SCRAM); providers differ.
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover),
			mail.WithUsername(e.username), mail.WithPassword(e.password))
	}
	c, err := mail.NewClient(e.host, opts...)
	if err != nil {
		return nil, fmt.Errorf("smtp client for %s:%d: %w", e.host, e.port, err)
	}
	return c, nil
}

// idToken keeps a Message-ID to characters every mail system accepts.
func idToken(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
