// Package email is the email channel: multipart (text + HTML) mail through
// an SMTP server with go-mail, which does implicit TLS, STARTTLS, a context
// and auth discovery; notify's mail service uses bare net/smtp.
package email

import (
	"fmt"
	"net/mail"
	"os"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the email channel type.
var Service = channel.Define[Config]("email")

// SMTP TLS modes.
const (
	TLSStartTLS = "starttls"
	TLSImplicit = "implicit"
	TLSNone     = "none"
)

// Config is an email channel's own keys.
type Config struct {
	SMTP SMTP     `yaml:"smtp"`
	From string   `yaml:"from"`
	To   []string `yaml:"to"`
}

// SMTP is the mail server of an email channel.
type SMTP struct {
	Host string `yaml:"host"`
	// Port defaults by TLS mode: 587 starttls, 465 implicit, 25 none.
	Port int `yaml:"port"`
	// TLS is starttls (default), implicit or none.
	TLS      string        `yaml:"tls"`
	Username string        `yaml:"username"`
	Password config.Secret `yaml:"password"`
	// CAFile trusts a private CA or self-signed relay certificate.
	CAFile string `yaml:"ca_file"`
}

var _ channel.Settings = Config{}

// DialPort is the configured port or the usual one for the TLS mode.
func (s SMTP) DialPort() int {
	if s.Port != 0 {
		return s.Port
	}
	switch s.Mode() {
	case TLSImplicit:
		return 465
	case TLSNone:
		return 25
	}
	return 587
}

// Mode is the TLS mode with the default applied.
func (s SMTP) Mode() string {
	if s.TLS == "" {
		return TLSStartTLS
	}
	return strings.ToLower(s.TLS)
}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	s := c.SMTP
	if strings.TrimSpace(s.Host) == "" {
		errs.Add(p+".smtp.host", nil, "empty: set the mail server, e.g. smtp.fastmail.com")
	}
	if s.Port < 0 || s.Port > 65535 {
		errs.Add(p+".smtp.port", s.Port, "must be 1-65535 (587 for starttls, 465 for implicit)")
	}
	channel.OneOf(errs, p+".smtp.tls", s.Mode(), TLSStartTLS, TLSImplicit, TLSNone)
	switch {
	case s.Mode() == TLSStartTLS && s.Port == 465:
		errs.Add(p+".smtp.tls", s.TLS, "port 465 speaks TLS from the first byte: set tls: implicit (or use port 587 with starttls)")
	case s.Mode() == TLSImplicit && (s.Port == 587 || s.Port == 25):
		errs.Add(p+".smtp.tls", s.TLS, "port %d starts in plain text: set tls: starttls (or use port 465 with implicit)", s.Port)
	}
	if (s.Username == "") != !s.Password.IsSet() {
		errs.Add(p+".smtp", nil, "username and password go together: set both or neither")
	}
	if s.Mode() == TLSNone && s.Username != "" {
		errs.Add(p+".smtp.tls", s.TLS, "refusing to send a password without TLS: use starttls or implicit")
	}
	if s.CAFile != "" {
		if _, err := os.Stat(s.CAFile); err != nil {
			errs.Add(p+".smtp.ca_file", s.CAFile, "cannot be read: %v", err)
		}
	}
	if strings.TrimSpace(c.From) == "" {
		errs.Add(p+".from", nil, "empty: set the sender address, e.g. zwatch@example.net")
	} else if _, err := mail.ParseAddress(c.From); err != nil {
		errs.Add(p+".from", c.From, "not an email address: %v", err)
	}
	if len(c.To) == 0 {
		errs.Add(p+".to", nil, "empty: add at least one recipient")
	}
	for i, to := range c.To {
		if _, err := mail.ParseAddress(to); err != nil {
			errs.Add(fmt.Sprintf("%s.to[%d]", p, i), to, "not an email address: %v", err)
		}
	}
}

// HasLiteralSecret reports a password written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.SMTP.Password.Literal }

// NewSender builds the channel's sender; it reads smtp.ca_file but dials nothing.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env) }
