// Package mattermost is the Mattermost channel: it posts to an incoming
// webhook, optionally into another channel, under another name or icon,
// and with a message priority.
package mattermost

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the mattermost channel type.
var Service = channel.Define[Config]("mattermost")

// textMax is a post's limit in characters since Mattermost 5.0 (4000
// before); a longer text is split into several posts, so it is cut here
// instead, keeping one notification one post.
const textMax = 16383

// Config is a mattermost channel's own keys.
type Config struct {
	// WebhookURL is the incoming webhook, https://chat.example.net/hooks/<key>;
	// the key is a secret.
	WebhookURL config.Secret `yaml:"webhook_url"`
	// Channel overrides the webhook's channel: a channel name (town-square)
	// or @username for a direct message.
	Channel string `yaml:"channel"`
	// Username and IconURL override the poster's name and picture, where the
	// server allows integrations to.
	Username string `yaml:"username"`
	IconURL  string `yaml:"icon_url"`
	// Priority marks critical pages Urgent and warnings Important
	// (Mattermost 7.7 and later, with message priority enabled).
	Priority bool `yaml:"priority"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	key := p + ".webhook_url"
	if !c.WebhookURL.IsSet() {
		errs.Add(key, nil, "empty: create an incoming webhook (Integrations → Incoming Webhooks → Add) and set its URL")
	} else {
		channel.RequiredURL(errs, key, c.WebhookURL.Value, "a https://<server>/hooks/<key> URL")
		if u, err := url.Parse(c.WebhookURL.Value); err == nil && u.Host != "" && !strings.Contains(u.Path, "/hooks/") {
			errs.Add(key, u.Scheme+"://"+u.Host+"/…", "is not an incoming webhook URL, which looks like https://%s/hooks/<key> (Integrations → Incoming Webhooks)", u.Host)
		}
	}
	ch := strings.TrimPrefix(c.Channel, "#")
	if ch != "" && (strings.ContainsAny(ch, " \t") || ch != strings.ToLower(ch)) {
		errs.Add(p+".channel", c.Channel, "use the channel's name as its URL shows it (e.g. town-square), not its display name; or @username for a direct message")
	}
	channel.OptionalURL(errs, p+".icon_url", c.IconURL)
}

// HasLiteralSecret reports a webhook URL written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.WebhookURL.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts one message per notification.
type Sender struct {
	url                        string
	channel, username, iconURL string
	priority                   bool
	client                     *http.Client
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	return &Sender{url: c.WebhookURL.Value, channel: c.Channel, username: c.Username, iconURL: c.IconURL,
		priority: c.Priority, client: env.HTTP}
}

// Payload is an incoming webhook request.
type Payload struct {
	Text     string         `json:"text"`
	Channel  string         `json:"channel,omitempty"`
	Username string         `json:"username,omitempty"`
	IconURL  string         `json:"icon_url,omitempty"`
	Props    map[string]any `json:"props,omitempty"`
	Priority *PostPriority  `json:"priority,omitempty"`
}

// PostPriority is a post's priority label.
type PostPriority struct {
	Priority string `json:"priority"`
}

// Send posts m as Markdown text.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	p := Payload{
		Text: channel.CutRunes(Escape(m.Text), textMax), Channel: s.channel, Username: s.username, IconURL: s.iconURL,
		// For integrations that read posts back through the REST API.
		Props: map[string]any{"zwatch_id": m.ID, "zwatch_host": m.Host, "zwatch_severity": string(m.Severity), "zwatch_status": m.Status()},
	}
	if s.priority {
		if label := Priority(m); label != "" {
			p.Priority = &PostPriority{Priority: label}
		}
	}
	return channel.Do(ctx, s.client, channel.Request{
		Service: "mattermost", URL: s.url, ContentType: "application/json",
		Payload: p, Secrets: []string{s.url},
	})
}

// Priority is the label for m: urgent for a critical page, important for a
// warning, none for the rest.
func Priority(m channel.Message) string {
	switch {
	case m.Resolved:
		return ""
	case m.Severity == alert.Critical:
		return "urgent"
	case m.Severity == alert.Warning:
		return "important"
	}
	return ""
}

// Escape keeps Markdown from rewriting plain text: emphasis, code and
// strike marks anywhere, headings and quotes at the start of a line.
// Brackets and angle brackets are left alone: without a link target or
// HTML rendering they show as they are, and push notifications show the
// raw text.
func Escape(text string) string {
	var b strings.Builder
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		body := strings.TrimLeft(line, " ")
		b.WriteString(line[:len(line)-len(body)])
		if strings.HasPrefix(body, "#") || strings.HasPrefix(body, ">") {
			b.WriteByte('\\')
		}
		for _, r := range body {
			if strings.ContainsRune("\\*`~", r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Hint reads Mattermost's refusals (its AppError messages).
func (s *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		return ""
	}
	d := strings.ToLower(se.Detail)
	switch {
	case strings.Contains(d, "invalid webhook") || strings.Contains(d, "unable to find the webhook"):
		return "Mattermost does not know this webhook (deleted, or its URL mistyped): create an incoming webhook again (Integrations → Incoming Webhooks) and set its URL in webhook_url"
	case strings.Contains(d, "not permitted to post to the requested channel"):
		return "the webhook is locked to its own channel: remove channel from this channel's config, or untick \"Lock to this channel\" in the webhook's settings"
	case strings.Contains(d, "channel permissions"):
		return "the webhook's creator is not a member of that private channel: add them, or post to another channel"
	case strings.Contains(d, "couldn't find the user") && s.channel != "" && strings.HasPrefix(s.channel, "@"):
		return "no such user for the direct message: check the username in channel (@username)"
	case strings.Contains(d, "couldn't find the user"):
		return "the user who created the webhook is gone or deactivated: create the webhook again as an active user"
	case strings.Contains(d, "priority") || se.Status == 403 && s.priority:
		// The refusal's wording differs between versions; it is a 403.
		return "this server does not take message priorities (System Console → Site Configuration → Posts → Message Priority is off): set priority: false, or turn it on"
	case strings.Contains(d, "couldn't find the channel"):
		return "the webhook's team has no channel by that name: use the name its URL shows (e.g. town-square), not its display name"
	case se.Status == 501 || strings.Contains(d, "disabled by the system admin"):
		return "incoming webhooks are turned off on this server: System Console → Integrations → Integration Management → Enable Incoming Webhooks"
	case strings.Contains(d, "unable to parse incoming data"):
		return "Mattermost could not read the request: something between zwatch and Mattermost (a proxy) changed it"
	case se.Status == 404:
		return "no incoming webhook at this URL: check webhook_url (https://<server>/hooks/<key>) and that it points at Mattermost"
	case se.Status == 403:
		return "Mattermost refused the post: check the webhook's channel and its creator's permissions"
	case se.Status == 413:
		return "the post is larger than this server takes (a proxy's body limit?)"
	case se.Status == 429:
		return "Mattermost rate-limits this client: the outbox retries by itself; an admin can raise System Console → Environment → Rate Limiting"
	}
	return ""
}

// AddressKey is webhook_url.
func (s *Sender) AddressKey() string { return "webhook_url" }
