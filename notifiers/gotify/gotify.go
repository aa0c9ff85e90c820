// Package gotify is the Gotify channel: it posts to a Gotify server's
// /message with an application token. notify has no gotify service.
package gotify

import (
	"context"
	"net/http"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the gotify channel type.
var Service = channel.Define[Config]("gotify")

// messageMax is in bytes; Gotify documents no limit, so stay sane.
const messageMax = 65000

// Config is a gotify channel's own keys.
type Config struct {
	// URL is the Gotify server.
	URL string `yaml:"url"`
	// Token is an application token (Apps), not a client token.
	Token config.Secret `yaml:"token"`
	// Priority, when set, is every alert's priority (0-10) in place of the
	// one its severity gives; resolved notices stay quiet.
	Priority *int `yaml:"priority"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.RequiredURL(errs, p+".url", c.URL, "the Gotify server, e.g. https://gotify.example.net")
	channel.Need(errs, p+".token", c.Token.IsSet(), "empty: set an application token (Gotify → Apps → create)")
	if c.Priority != nil && (*c.Priority < 0 || *c.Priority > 10) {
		errs.Add(p+".priority", *c.Priority, "must be 0 to 10 (8 and above pop up on Android), or left out to let each alert's severity choose")
	}
}

// HasLiteralSecret reports an application token written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.Token.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts one message per notification.
type Sender struct {
	url, token string
	priority   *int
	client     *http.Client
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	return &Sender{url: strings.TrimRight(c.URL, "/"), token: c.Token.Value, priority: c.Priority, client: env.HTTP}
}

// Send posts m as plain text.
func (g *Sender) Send(ctx context.Context, m channel.Message) error {
	h := http.Header{}
	// The header keeps the token out of URLs in proxy logs.
	h.Set("X-Gotify-Key", g.token)
	payload := map[string]any{
		"title":    m.Title,
		"message":  channel.CutBytes(m.Text, messageMax),
		"priority": channel.Fixed(Priority(m), g.priority, m.Resolved),
		"extras": map[string]any{
			"client::display": map[string]string{"contentType": "text/plain"},
		},
	}
	return channel.Do(ctx, g.client, channel.Request{
		Service: "gotify", URL: g.url + "/message", Header: h, ContentType: "application/json",
		Payload: payload, Secrets: []string{g.token},
	})
}

// Priority: the Android app pops up at 8 and above, makes a sound at 4-7.
func Priority(m channel.Message) int {
	switch {
	case m.Resolved:
		return 2
	case m.Severity == alert.Critical:
		return 8
	case m.Severity == alert.Warning:
		return 5
	}
	return 2
}

// Hint explains a refused token.
func (g *Sender) Hint(err error) string {
	if se, ok := channel.AsServiceError(err); ok && (se.Status == 401 || se.Status == 403) {
		return "Gotify refused the token: use an application token (Apps), not a client token"
	}
	return ""
}

// AddressKey is url.
func (g *Sender) AddressKey() string { return "url" }
