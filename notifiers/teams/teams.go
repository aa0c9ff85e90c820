// Package teams is the Microsoft Teams channel: an Adaptive Card posted to
// a Workflows (Power Automate) webhook, the "Post to a channel when a
// webhook request is received" template. The Office 365 connector webhooks
// it replaces are retired and refused when the config is checked.
package teams

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the teams channel type.
var Service = channel.Define[Config]("teams")

// messageMax bounds the request body: Teams refuses messages over 28 KB,
// and the card is posted as it is sent, so this leaves a little room.
const messageMax = 28000

// cardVersion is the newest Adaptive Card schema Teams renders on every
// client, mobile included.
const cardVersion = "1.4"

// Config is a teams channel's own keys.
type Config struct {
	// WebhookURL is the workflow's HTTP POST URL; its sig parameter is a
	// secret.
	WebhookURL config.Secret `yaml:"webhook_url"`
}

var _ channel.Settings = Config{}

const createWorkflow = "in Teams open the channel's ⋯ → Workflows → \"Post to a channel when a webhook request is received\", and copy the URL it shows"

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	key := p + ".webhook_url"
	if !c.WebhookURL.IsSet() {
		errs.Add(key, nil, "empty: %s", createWorkflow)
		return
	}
	channel.RequiredURL(errs, key, c.WebhookURL.Value, "the workflow's https://... URL")
	u, err := url.Parse(c.WebhookURL.Value)
	if err != nil {
		return
	}
	switch {
	case isConnector(u):
		errs.Add(key, u.Scheme+"://"+u.Host+"/…", "is an Office 365 connector webhook, which Microsoft has retired: %s", createWorkflow)
	case strings.Contains(c.WebhookURL.Value, "&amp;"):
		errs.Add(key, nil, "contains &amp;, an HTML-escaped &: write each &amp; as & (copy the URL from the workflow, not from an HTML page)")
	case strings.Contains(u.Path, "/triggers/manual/paths/invoke") && u.Query().Get("sig") == "":
		errs.Add(key, nil, "has no sig= parameter, so Power Automate will demand a sign-in: in the workflow's trigger set \"Who can trigger the flow\" to Anyone, then copy the whole URL again")
	}
}

// isConnector tells an Office 365 connector's webhook, which Microsoft
// retired, by its host.
func isConnector(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	return strings.HasSuffix(host, ".webhook.office.com") || (host == "outlook.office.com" || host == "outlook.office365.com") && strings.HasPrefix(u.Path, "/webhook")
}

// HasLiteralSecret reports a webhook URL written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.WebhookURL.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts one card per notification.
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

// Send posts m as an Adaptive Card message.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	msg, err := channel.FitJSON(messageMax, m.Text, func(text string) Message { return NewMessage(m, text) })
	if err != nil {
		return err
	}
	return channel.Do(ctx, s.client, channel.Request{
		Service: "teams", URL: s.url, ContentType: "application/json",
		Payload: msg, Secrets: []string{s.url},
	})
}

// Message is the body the workflow receives: a message whose attachments
// are cards; the template posts each card to the channel.
type Message struct {
	Type        string       `json:"type"`
	Attachments []Attachment `json:"attachments"`
}

// Attachment holds one card.
type Attachment struct {
	ContentType string `json:"contentType"`
	ContentURL  any    `json:"contentUrl"`
	Content     Card   `json:"content"`
}

// Card is an Adaptive Card.
type Card struct {
	Schema       string           `json:"$schema"`
	Type         string           `json:"type"`
	Version      string           `json:"version"`
	FallbackText string           `json:"fallbackText,omitempty"`
	Body         []map[string]any `json:"body"`
	MSTeams      map[string]any   `json:"msteams,omitempty"`
}

// NewMessage renders text (m.Text, perhaps cut) as a card: the summary
// in a band coloured by severity, then one text block per line, so line
// breaks survive Teams' Markdown.
func NewMessage(m channel.Message, text string) Message {
	first, rest, _ := strings.Cut(text, "\n")
	body := []map[string]any{{
		"type": "Container", "style": Style(m), "bleed": true,
		"items": []map[string]any{{"type": "TextBlock", "text": first, "weight": "Bolder", "size": "Medium", "wrap": true}},
	}}
	gap := false
	for _, line := range strings.Split(rest, "\n") {
		if strings.TrimSpace(line) == "" {
			gap = true
			continue
		}
		block := map[string]any{"type": "TextBlock", "text": line, "wrap": true, "spacing": "None"}
		if gap {
			block["spacing"] = "Medium"
			gap = false
		}
		body = append(body, block)
	}
	return Message{Type: "message", Attachments: []Attachment{{
		ContentType: "application/vnd.microsoft.card.adaptive",
		Content: Card{
			Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard", Version: cardVersion,
			FallbackText: m.Summary, Body: body, MSTeams: map[string]any{"width": "Full"},
		},
	}}}
}

// Style is the container style for m's severity: Adaptive Cards have no
// priority, only colour.
func Style(m channel.Message) string {
	switch {
	case m.Resolved:
		return "good"
	case m.Severity == alert.Critical:
		return "attention"
	case m.Severity == alert.Warning:
		return "warning"
	}
	return "accent"
}

// Hint reads Power Automate's refusals.
func (s *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		return ""
	}
	d := strings.ToLower(se.Detail)
	switch {
	case se.Status == 401 || se.Status == 403 || strings.Contains(d, "directapiauthorizationrequired"):
		return "Power Automate wants a signature or a sign-in: copy the workflow's whole URL again (with its sp=, sv= and sig= parameters, & not &amp;), and set the trigger's \"Who can trigger the flow\" to Anyone"
	case strings.Contains(d, "notenabled") || strings.Contains(d, "disabled"):
		return "the workflow is turned off: turn it on in Teams → Workflows → Manage workflows"
	case se.Status == 404:
		return "Power Automate has no such workflow (deleted, or the URL is cut short): " + createWorkflow
	case se.Status == 413 || strings.Contains(d, "too large"):
		return "the message is over Teams' 28 KB limit for a card"
	case se.Status == 429:
		return "Power Automate throttles this workflow: the outbox retries by itself; a workflow that runs out of its daily actions pauses until the next day"
	case se.Status == 400:
		return "the workflow refused the request: it must start with the trigger \"When a Teams webhook request is received\" (template \"Post to a channel when a webhook request is received\")"
	}
	return ""
}

// AddressKey is webhook_url.
func (s *Sender) AddressKey() string { return "webhook_url" }
