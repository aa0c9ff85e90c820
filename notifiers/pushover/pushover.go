// Package pushover is the Pushover channel. It posts to the message API
// directly: notify's pushover service neither sets a priority nor accepts a
// context or base URL.
package pushover

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the pushover channel type.
var Service = channel.Define[Config]("pushover")

// DefaultAPI is the message API used unless api_url says otherwise.
const DefaultAPI = "https://api.pushover.net/1/messages.json"

// Pushover's limits, in characters.
const (
	titleMax   = 250
	messageMax = 1024
)

// Config is a pushover channel's own keys.
type Config struct {
	// Token is the application's API token.
	Token config.Secret `yaml:"token"`
	// User is the user or group key.
	User config.Secret `yaml:"user"`
	// APIURL overrides the message API, for a proxy.
	APIURL string `yaml:"api_url"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.Need(errs, p+".token", c.Token.IsSet(), "empty: set the application API token from https://pushover.net/apps")
	channel.Need(errs, p+".user", c.User.IsSet(), "empty: set your user (or group) key from the Pushover dashboard")
	channel.OptionalURL(errs, p+".api_url", c.APIURL)
}

// HasLiteralSecret reports a token or user key written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.Token.Literal || c.User.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts one message per notification.
type Sender struct {
	api, token, user string
	customAPI        bool
	client           *http.Client
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	api := strutil.FirstNonEmpty(c.APIURL, DefaultAPI)
	return &Sender{api: api, token: c.Token.Value, user: c.User.Value, customAPI: c.APIURL != "", client: env.HTTP}
}

// Send posts m as a form, as the API documents it.
func (p *Sender) Send(ctx context.Context, m channel.Message) error {
	form := url.Values{
		"token":    {p.token},
		"user":     {p.user},
		"title":    {channel.CutRunes(m.Title, titleMax)},
		"message":  {channel.CutRunes(m.Text, messageMax)},
		"priority": {strconv.Itoa(Priority(m))},
	}
	if !m.Created.IsZero() {
		form.Set("timestamp", strconv.FormatInt(m.Created.Unix(), 10))
	}
	return channel.Do(ctx, p.client, channel.Request{
		Service: "pushover", URL: p.api, ContentType: "application/x-www-form-urlencoded",
		Payload: form, Secrets: []string{p.token, p.user},
		Check: func(raw []byte) error {
			var r struct {
				Status int `json:"status"`
			}
			if json.Unmarshal(raw, &r) == nil && r.Status != 1 {
				return &channel.ServiceError{Service: "pushover", Status: http.StatusOK, Detail: channel.Detail(raw)}
			}
			return nil
		},
	})
}

// Priority: 1 (high, bypasses quiet hours) for critical, quiet for resolved
// notices and info, normal otherwise. Emergency (2) needs an
// acknowledgement workflow zwatch does not run.
func Priority(m channel.Message) int {
	switch {
	case m.Resolved, m.Severity == alert.Info:
		return -1
	case m.Severity == alert.Critical:
		return 1
	}
	return 0
}

// Hint says which of the two keys Pushover refused.
func (p *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		return ""
	}
	d := strings.ToLower(se.Detail)
	switch {
	case strings.Contains(d, "token"):
		return "Pushover refused the application token: copy the API token of your zwatch application from https://pushover.net/apps"
	case strings.Contains(d, "user"):
		return "Pushover refused the user key: copy the user (or group) key from the Pushover dashboard"
	}
	return ""
}

// AddressKey is api_url when set.
func (p *Sender) AddressKey() string {
	if p.customAPI {
		return "api_url"
	}
	return "the service address"
}
