// Package ntfy is the ntfy channel (https://ntfy.sh or a self-hosted
// server). It publishes as JSON to the server root: unlike the header form,
// JSON carries a non-ASCII title (the em dash of a summary) without
// encoding tricks. notify has no ntfy service.
package ntfy

import (
	"context"
	"net/http"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the ntfy channel type.
var Service = channel.Define[Config]("ntfy")

// DefaultURL is the server used unless url says otherwise.
const DefaultURL = "https://ntfy.sh"

// messageMax is in bytes; larger bodies become attachments.
const messageMax = 4096

// Config is an ntfy channel's own keys.
type Config struct {
	// URL is the server; default https://ntfy.sh.
	URL   string `yaml:"url"`
	Topic string `yaml:"topic"`
	// Token is an access token (tk_...) for a protected topic.
	Token config.Secret `yaml:"token"`
	// Username and Password log in with basic auth instead of a token
	// (https://docs.ntfy.sh/publish/#username-password).
	Username string        `yaml:"username"`
	Password config.Secret `yaml:"password"`
	// Priority, when set, is every alert's priority (1 min - 5 max) in place
	// of the one its severity gives; resolved notices stay quiet.
	Priority *int `yaml:"priority"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.OptionalURL(errs, p+".url", c.URL)
	if strings.TrimSpace(c.Topic) == "" {
		errs.Add(p+".topic", nil, "empty: set the topic to publish to (pick a hard-to-guess name on ntfy.sh)")
	} else if strings.ContainsAny(c.Topic, "/?# ") {
		errs.Add(p+".topic", c.Topic, "must be a bare topic name without /, ?, # or spaces")
	}
	switch {
	case (c.Username == "") != !c.Password.IsSet():
		errs.Add(p+".username", nil, "username and password go together: set both or neither")
	case c.Username != "" && c.Token.IsSet():
		errs.Add(p+".token", nil, "use either token, or username and password, not both")
	}
	if c.Priority != nil && (*c.Priority < 1 || *c.Priority > 5) {
		errs.Add(p+".priority", *c.Priority, "must be 1 (min) to 5 (max), or left out to let each alert's severity choose")
	}
}

// HasLiteralSecret reports an access token or password written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.Token.Literal || c.Password.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender publishes one message per notification.
type Sender struct {
	url, topic, token  string
	username, password string
	priority           *int
	client             *http.Client
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	u := strings.TrimRight(c.URL, "/")
	if u == "" {
		u = DefaultURL
	}
	return &Sender{url: u, topic: c.Topic, token: c.Token.Value, username: c.Username, password: c.Password.Value,
		priority: c.Priority, client: env.HTTP}
}

// Send publishes m to the topic.
func (n *Sender) Send(ctx context.Context, m channel.Message) error {
	h := http.Header{}
	switch {
	case n.token != "":
		h.Set("Authorization", "Bearer "+n.token)
	case n.username != "":
		r := http.Request{Header: h}
		r.SetBasicAuth(n.username, n.password)
	}
	payload := map[string]any{
		"topic":    n.topic,
		"title":    m.Title,
		"message":  channel.CutBytes(m.Text, messageMax),
		"priority": channel.Fixed(Priority(m), n.priority, m.Resolved),
		"tags":     Tags(m),
	}
	if actions := Actions(m); len(actions) > 0 {
		payload["actions"] = actions
	}
	return channel.Do(ctx, n.client, channel.Request{
		Service: "ntfy", URL: n.url + "/", Header: h, ContentType: "application/json",
		Payload: payload, Secrets: []string{n.token, n.password},
	})
}

// maxActions is ntfy's limit of action buttons per message
// (https://docs.ntfy.sh/publish/#action-buttons).
const maxActions = 3

// Actions are the page's answer links as ntfy "view" buttons: a tap opens
// the status page's confirmation (it acts on nothing by itself) and
// clears the notification.
func Actions(m channel.Message) []map[string]any {
	var out []map[string]any
	for _, l := range m.Links {
		if len(out) == maxActions {
			break
		}
		out = append(out, map[string]any{"action": "view", "label": l.Label, "url": l.URL, "clear": true})
	}
	return out
}

// Priority: 5 (urgent: long vibration, pop-over) for critical.
func Priority(m channel.Message) int {
	switch {
	case m.Resolved:
		return 2
	case m.Severity == alert.Critical:
		return 5
	case m.Severity == alert.Warning:
		return 4
	}
	return 3
}

// Tags are the emoji ntfy shows before the title.
func Tags(m channel.Message) []string {
	switch {
	case m.Resolved:
		return []string{"white_check_mark", "zwatch"}
	case m.Severity == alert.Critical:
		return []string{"rotating_light", "zwatch"}
	case m.Severity == alert.Warning:
		return []string{"warning", "zwatch"}
	}
	return []string{"information_source", "zwatch"}
}

// Hint explains a refusal to publish to the topic.
func (n *Sender) Hint(err error) string {
	if se, ok := channel.AsServiceError(err); ok && (se.Status == 401 || se.Status == 403) {
		return "ntfy refused access to this topic: set token to an access token (tk_...), or username and password, allowed to publish to it"
	}
	return ""
}

// AddressKey is url.
func (n *Sender) AddressKey() string { return "url" }
