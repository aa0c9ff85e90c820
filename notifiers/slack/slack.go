// Package slack is the Slack channel: an incoming webhook, or a bot token
// posting with chat.postMessage. notify's slack service supports only the
// token form and no base URL.
package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the slack channel type.
var Service = channel.Define[Config]("slack")

// DefaultAPI is the Web API used unless api_url says otherwise.
const DefaultAPI = "https://slack.com/api"

// textMax is in characters; Slack truncates beyond.
const textMax = 40000

// Config is a slack channel's own keys: webhook_url, or token and channel.
type Config struct {
	// WebhookURL is an incoming webhook; its path is a secret.
	WebhookURL config.Secret `yaml:"webhook_url"`
	// Token is a bot token (xoxb-...) with chat:write.
	Token config.Secret `yaml:"token"`
	// Channel is the channel id or #name the bot posts to.
	Channel string `yaml:"channel"`
	// APIURL overrides the Web API base, for a proxy.
	APIURL string `yaml:"api_url"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	switch {
	case c.WebhookURL.IsSet() && (c.Token.IsSet() || c.Channel != ""):
		errs.Add(p+".webhook_url", nil, "use either webhook_url, or token and channel, not both")
	case c.WebhookURL.IsSet():
		channel.RequiredURL(errs, p+".webhook_url", c.WebhookURL.Value, "a https://hooks.slack.com/services/... URL")
	case c.Token.IsSet() || c.Channel != "":
		channel.Need(errs, p+".token", c.Token.IsSet(), "empty: set a bot token (xoxb-...) with chat:write, or use webhook_url")
		channel.Need(errs, p+".channel", strings.TrimSpace(c.Channel) != "", "empty: set the channel id or #name the bot posts to")
	default:
		errs.Add(p+".webhook_url", nil, "empty: set webhook_url, or token and channel")
	}
	channel.OptionalURL(errs, p+".api_url", c.APIURL)
}

// HasLiteralSecret reports a webhook URL or token written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.WebhookURL.Literal || c.Token.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts one message per notification.
type Sender struct {
	webhook, api, token, channel string
	customAPI                    bool
	client                       *http.Client
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	api := strutil.FirstNonEmpty(strings.TrimRight(c.APIURL, "/"), DefaultAPI)
	return &Sender{webhook: c.WebhookURL.Value, api: api, token: c.Token.Value, channel: c.Channel, customAPI: c.APIURL != "", client: env.HTTP}
}

// Send posts m through the webhook, or as the bot.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	msg := channel.CutRunes(m.Text, textMax)
	if s.webhook != "" {
		return channel.Do(ctx, s.client, channel.Request{
			Service: "slack", URL: s.webhook, ContentType: "application/json",
			Payload: map[string]any{"text": msg}, Secrets: []string{s.webhook},
		})
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+s.token)
	return channel.Do(ctx, s.client, channel.Request{
		Service: "slack", URL: s.api + "/chat.postMessage", Header: h,
		ContentType: "application/json; charset=utf-8",
		Payload:     map[string]any{"channel": s.channel, "text": msg},
		Secrets:     []string{s.token},
		Check: func(raw []byte) error {
			// The Web API answers 200 with ok:false for bad tokens and channels.
			var r struct {
				OK bool `json:"ok"`
			}
			if err := json.Unmarshal(raw, &r); err != nil || !r.OK {
				return &channel.ServiceError{Service: "slack", Status: http.StatusOK, Detail: channel.Detail(raw)}
			}
			return nil
		},
	})
}

// Hint reads Slack's error codes.
func (s *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		return ""
	}
	d := strings.ToLower(se.Detail)
	switch {
	case strings.Contains(d, "invalid_auth"), strings.Contains(d, "not_authed"), strings.Contains(d, "invalid_token"), strings.Contains(d, "token_revoked"):
		return "Slack refused the token: use a bot token (xoxb-...) with the chat:write scope"
	case strings.Contains(d, "channel_not_found"), strings.Contains(d, "not_in_channel"):
		return "the bot cannot post there: invite it to the channel (/invite @bot) and check the channel id"
	case strings.Contains(d, "no_service"), se.Status == 404:
		return "Slack does not know this webhook URL (deleted or mistyped): create a new incoming webhook"
	}
	return ""
}

// AddressKey is webhook_url or api_url, whichever the channel uses.
func (s *Sender) AddressKey() string {
	switch {
	case s.webhook != "":
		return "webhook_url"
	case s.customAPI:
		return "api_url"
	}
	return "the service address"
}
