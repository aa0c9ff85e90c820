// Package discord is the Discord channel: it posts to a channel webhook.
// notify's discord service needs a bot token and a gateway session, which a
// NAS has no use for.
package discord

import (
	"context"
	"net/http"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the discord channel type.
var Service = channel.Define[Config]("discord")

// contentMax is a webhook message's limit in characters.
const contentMax = 2000

// Config is a discord channel's own keys.
type Config struct {
	// WebhookURL is the channel's webhook; its path is a secret.
	WebhookURL config.Secret `yaml:"webhook_url"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	if !c.WebhookURL.IsSet() {
		errs.Add(p+".webhook_url", nil, "empty: set the channel's webhook URL (Server settings → Integrations → Webhooks)")
		return
	}
	channel.RequiredURL(errs, p+".webhook_url", c.WebhookURL.Value, "a https://discord.com/api/webhooks/... URL")
}

// HasLiteralSecret reports a webhook URL written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.WebhookURL.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts one message per notification.
type Sender struct {
	url    string
	client *http.Client
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	return &Sender{url: c.WebhookURL.Value, client: env.HTTP}
}

// Send posts m as the webhook's content.
func (d *Sender) Send(ctx context.Context, m channel.Message) error {
	payload := map[string]any{
		"content":  channel.CutRunes(m.Text, contentMax),
		"username": "zwatch",
		// Alert text must never ping @everyone.
		"allowed_mentions": map[string]any{"parse": []string{}},
	}
	return channel.Do(ctx, d.client, channel.Request{
		Service: "discord", URL: d.url, ContentType: "application/json",
		Payload: payload, Secrets: []string{d.url},
	})
}

// Hint explains a webhook Discord does not know.
func (d *Sender) Hint(err error) string {
	if se, ok := channel.AsServiceError(err); ok && (se.Status == 401 || se.Status == 404) {
		return "Discord does not know this webhook (deleted, or URL mistyped): copy the webhook URL again"
	}
	return ""
}

// AddressKey is webhook_url.
func (d *Sender) AddressKey() string { return "webhook_url" }
