// Package webhook is the generic webhook channel: one JSON POST per
// notification with the rendered text for chat-like receivers and the whole
// notification for programs (Payload).
package webhook

import (
	"context"
	"net/http"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the webhook channel type.
var Service = channel.Define[Config]("webhook")

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
type Payload = channel.Payload

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
	return channel.Do(ctx, w.client, channel.Request{
		Service: "webhook", URL: w.url, Header: w.headers, ContentType: "application/json",
		Payload: channel.NewPayload(m), Secrets: w.secrets,
	})
}

// Hint has nothing to add to the generic hints: the receiver is anyone's.
func (w *Sender) Hint(error) string { return "" }

// AddressKey is url.
func (w *Sender) AddressKey() string { return "url" }
