// Package webhook is the generic webhook channel: one JSON POST per
// notification with the rendered text for chat-like receivers and the whole
// notification for programs (Payload).
package webhook

import (
	"context"
	"net/http"
	"strings"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the webhook channel type.
var Service = channel.Define[Config]("webhook")

// textMax bounds the rendered text in bytes; the notification is whole.
const textMax = 1 << 20

// Config is a webhook channel's own keys.
type Config struct {
	// URL receives the POST.
	URL string `yaml:"url"`
	// Headers are added to every request (e.g. Authorization); their values
	// are secrets.
	Headers map[string]config.Secret `yaml:"headers"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.RequiredURL(errs, p+".url", c.URL, "the address that receives a JSON POST")
	for k := range c.Headers {
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " :\r\n") {
			errs.Add(p+".headers", k, "not a valid HTTP header name")
		}
	}
}

// HasLiteralSecret reports a header value written in the file itself.
func (c Config) HasLiteralSecret() bool {
	for _, h := range c.Headers {
		if h.Literal {
			return true
		}
	}
	return false
}

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Payload is the JSON body of a generic webhook: the rendered text for
// chat-like receivers and the whole notification for programs.
type Payload struct {
	Version      string             `json:"version"`
	ID           string             `json:"id"`
	Host         string             `json:"host"`
	Status       string             `json:"status"`
	Severity     string             `json:"severity"`
	Test         bool               `json:"test,omitempty"`
	Title        string             `json:"title"`
	Summary      string             `json:"summary"`
	Text         string             `json:"text"`
	Notification alert.Notification `json:"notification"`
}

// Sender posts one Payload per notification.
type Sender struct {
	url     string
	headers http.Header
	secrets []string
	client  *http.Client
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	h := http.Header{}
	var secrets []string
	for k, v := range c.Headers {
		h.Set(k, v.Value)
		secrets = append(secrets, v.Value)
	}
	return &Sender{url: c.URL, headers: h, secrets: secrets, client: env.HTTP}
}

// Send posts m as a Payload.
func (w *Sender) Send(ctx context.Context, m channel.Message) error {
	status := "firing"
	if m.Resolved {
		status = "resolved"
	}
	p := Payload{
		Version: "1", ID: m.ID, Host: m.Host, Status: status, Severity: string(m.Severity),
		Test: m.Test, Title: m.Title, Summary: m.Summary, Text: channel.CutBytes(m.Text, textMax),
		Notification: m.Notification,
	}
	return channel.Do(ctx, w.client, channel.Request{
		Service: "webhook", URL: w.url, Header: w.headers, ContentType: "application/json",
		Payload: p, Secrets: w.secrets,
	})
}

// Hint has nothing to add to the generic hints: the receiver is anyone's.
func (w *Sender) Hint(error) string { return "" }

// AddressKey is url.
func (w *Sender) AddressKey() string { return "url" }
