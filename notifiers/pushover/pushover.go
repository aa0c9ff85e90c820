// Package pushover is the Pushover channel. It posts to the message API
// directly: notify's pushover service neither sets a priority nor accepts a
// context or base URL.
package pushover

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/alert"
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
	// Devices, when set, are the only devices of the user that ring.
	Devices []string `yaml:"devices"`
	// Priority, when set, is every alert's priority (-2 lowest to 1 high)
	// in place of the one its severity gives; resolved notices stay quiet.
	Priority *int `yaml:"priority"`
	// Emergency, when set, sends critical pages at emergency priority,
	// repeated until acknowledged in the app (emergency.go).
	Emergency *Emergency `yaml:"emergency"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.Need(errs, p+".token", c.Token.IsSet(), "empty: set the application API token from https://pushover.net/apps")
	channel.Need(errs, p+".user", c.User.IsSet(), "empty: set your user (or group) key from the Pushover dashboard")
	channel.OptionalURL(errs, p+".api_url", c.APIURL)
	for i, d := range c.Devices {
		if !validDevice(d) {
			errs.Add(fmt.Sprintf("%s.devices[%d]", p, i), d, "not a device name: up to 25 letters, digits, - and _, as the Pushover dashboard lists them")
		}
	}
	if c.Priority != nil {
		switch pr := *c.Priority; {
		case pr == 2:
			errs.Add(p+".priority", pr, "emergency priority is for critical pages only: set emergency: {retry: 1m, expire: 1h} instead, and leave priority out or at 1")
		case pr < -2 || pr > 1:
			errs.Add(p+".priority", pr, "must be -2 (lowest) to 1 (high), or left out to let each alert's severity choose")
		}
	}
	if c.Emergency != nil {
		c.Emergency.validate(p+".emergency", errs, c.APIURL)
	}
}

// validDevice: Pushover device names are up to 25 characters of
// [A-Za-z0-9_-] (https://pushover.net/api#identifiers).
func validDevice(d string) bool {
	return d != "" && len(d) <= 25 && strings.Trim(d, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == ""
}

// HasLiteralSecret reports a token or user key written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.Token.Literal || c.User.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts one message per notification.
type Sender struct {
	api, token, user string
	devices          []string
	priority         *int
	customAPI        bool
	client           *http.Client
	// emergency, receipts, name and poll: emergency pages and the
	// acknowledgements of them (emergency.go); poll is shorter in tests.
	emergency *Emergency
	receipts  receipts
	name      string
	poll      time.Duration
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	api := strutil.FirstNonEmpty(c.APIURL, DefaultAPI)
	return &Sender{api: api, token: c.Token.Value, user: c.User.Value, devices: c.Devices, priority: c.Priority,
		customAPI: c.APIURL != "", client: env.HTTP, emergency: c.Emergency}
}

// Send posts m as a form, as the API documents it.
func (p *Sender) Send(ctx context.Context, m channel.Message) error {
	form := url.Values{
		"token":    {p.token},
		"user":     {p.user},
		"title":    {channel.CutRunes(m.Title, titleMax)},
		"message":  {channel.CutRunes(m.Text, messageMax)},
		"priority": {strconv.Itoa(channel.Fixed(Priority(m), p.priority, m.Resolved))},
	}
	if len(p.devices) > 0 {
		// Several devices go comma-separated in the one device parameter.
		form.Set("device", strings.Join(p.devices, ","))
	}
	if !m.Created.IsZero() {
		form.Set("timestamp", strconv.FormatInt(m.Created.Unix(), 10))
	}
	emergency, incident := p.emergencyPage(m), m.Incident()
	if emergency {
		p.emergencyForm(form)
	}
	if m.Resolved && p.emergency != nil && incident != "" {
		// Best effort: the resolved notice matters more than the repeats'
		// end, which expire brings anyway.
		_ = p.cancel(ctx, incident)
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
			if emergency {
				p.noteReceipt(raw, incident)
			}
			return nil
		},
	})
}

// Priority: 1 (high, bypasses quiet hours) for critical, quiet for resolved
// notices and info, normal otherwise. Emergency (2) is the emergency key's
// (emergency.go).
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
