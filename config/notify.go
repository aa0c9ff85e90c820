package config

import (
	"fmt"
	"net/mail"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
)

// NotifyConfig lists the channels that deliver alerts to people.
type NotifyConfig struct {
	// Console logs every notification to zwatch's own log; on by default so
	// that a fresh install shows what it would send.
	Console bool `yaml:"console"`
	// RetryFor is how long a channel keeps retrying one notification before
	// it is dead-lettered and reported through the other channels.
	RetryFor Duration `yaml:"retry_for"`
	// RetryInitial is the first retry delay; it doubles up to RetryMax.
	RetryInitial Duration `yaml:"retry_initial"`
	RetryMax     Duration `yaml:"retry_max"`
	// SendTimeout bounds one delivery attempt to one service.
	SendTimeout Duration        `yaml:"send_timeout"`
	Channels    []ChannelConfig `yaml:"channels"`
}

// Channel types.
const (
	ChannelEmail    = "email"
	ChannelPushover = "pushover"
	ChannelTelegram = "telegram"
	ChannelNtfy     = "ntfy"
	ChannelGotify   = "gotify"
	ChannelDiscord  = "discord"
	ChannelSlack    = "slack"
	ChannelWebhook  = "webhook"
)

// ChannelTypes lists every channel type in the order the docs present them.
var ChannelTypes = []string{ChannelEmail, ChannelPushover, ChannelTelegram, ChannelNtfy, ChannelGotify, ChannelDiscord, ChannelSlack, ChannelWebhook}

// SMTP TLS modes.
const (
	TLSStartTLS = "starttls"
	TLSImplicit = "implicit"
	TLSNone     = "none"
)

// ChannelConfig is one destination. Keys that belong to other types are
// refused, so a pasted block for the wrong service is noticed.
type ChannelConfig struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
	// MinSeverity drops alerts below it (info, warning, critical); default warning.
	MinSeverity string `yaml:"min_severity"`
	// SendResolved sends a notice when an alert ends; default true.
	SendResolved *bool       `yaml:"send_resolved"`
	Route        RouteConfig `yaml:"route"`

	// email
	SMTP SMTPConfig `yaml:"smtp"`
	From string     `yaml:"from"`
	To   []string   `yaml:"to"`

	// Token is the Pushover application token, Telegram bot token, ntfy
	// access token, Gotify application token or Slack bot token.
	Token Secret `yaml:"token"`
	// User is the Pushover user or group key.
	User Secret `yaml:"user"`
	// ChatIDs are Telegram chat ids (-100123…, 4242) or @channelnames.
	ChatIDs []string `yaml:"chat_ids"`
	// URL is the ntfy server (default https://ntfy.sh), the Gotify server,
	// or the generic webhook's address.
	URL   string `yaml:"url"`
	Topic string `yaml:"topic"`
	// WebhookURL is a Discord or Slack incoming webhook; it embeds a secret.
	WebhookURL Secret `yaml:"webhook_url"`
	// Channel is the Slack channel for token-based posting.
	Channel string `yaml:"channel"`
	// Headers are added to every webhook request (e.g. Authorization).
	Headers map[string]Secret `yaml:"headers"`
	// APIURL overrides the service's API base (Pushover, Telegram, Slack)
	// for a proxy or a self-hosted compatible server.
	APIURL string `yaml:"api_url"`
}

// SMTPConfig is the mail server of an email channel.
type SMTPConfig struct {
	Host string `yaml:"host"`
	// Port defaults by TLS mode: 587 starttls, 465 implicit, 25 none.
	Port int `yaml:"port"`
	// TLS is starttls (default), implicit or none.
	TLS      string `yaml:"tls"`
	Username string `yaml:"username"`
	Password Secret `yaml:"password"`
	// CAFile trusts a private CA or self-signed relay certificate.
	CAFile string `yaml:"ca_file"`
}

// RouteConfig narrows which alerts a channel receives.
type RouteConfig struct {
	// Pools keeps only alerts about these pools (alerts about no pool pass).
	Pools []string `yaml:"pools"`
	// Alerts keeps only alerts whose name matches one of these globs.
	Alerts []string `yaml:"alerts"`
}

// DefaultNotify is the notification config used when the file sets none.
func DefaultNotify() NotifyConfig {
	return NotifyConfig{
		Console:      true,
		RetryFor:     Duration(7 * 24 * time.Hour),
		RetryInitial: Duration(10 * time.Second),
		RetryMax:     Duration(time.Hour),
		SendTimeout:  Duration(30 * time.Second),
	}
}

// Resolved reports whether the channel sends resolved notices.
func (c ChannelConfig) Resolved() bool { return c.SendResolved == nil || *c.SendResolved }

// Severity is the channel's minimum severity with the default applied.
func (c ChannelConfig) Severity() string {
	if c.MinSeverity == "" {
		return "warning"
	}
	return strings.ToLower(c.MinSeverity)
}

// SMTPPort is the configured port or the usual one for the TLS mode.
func (s SMTPConfig) SMTPPort() int {
	if s.Port != 0 {
		return s.Port
	}
	switch s.Mode() {
	case TLSImplicit:
		return 465
	case TLSNone:
		return 25
	}
	return 587
}

// Mode is the TLS mode with the default applied.
func (s SMTPConfig) Mode() string {
	if s.TLS == "" {
		return TLSStartTLS
	}
	return strings.ToLower(s.TLS)
}

// ChannelToken turns a channel name into the token used for its durable
// consumer and dead-letter subject: [A-Za-z0-9_-] only, never empty.
func ChannelToken(name string) string { return bus.Token(name) }

func (n *NotifyConfig) validate(p string, errs *Errors) {
	if n.RetryFor.D() < time.Second {
		errs.add(p+".retry_for", FormatDuration(n.RetryFor.D()), "too short: must be at least 1s (default 7d)")
	}
	positive(errs, p+".retry_initial", n.RetryInitial, 10*time.Millisecond)
	if n.RetryMax.D() < n.RetryInitial.D() {
		errs.add(p+".retry_max", FormatDuration(n.RetryMax.D()), "must be at least retry_initial (%s)", FormatDuration(n.RetryInitial.D()))
	}
	positive(errs, p+".send_timeout", n.SendTimeout, 100*time.Millisecond)
	seen := map[string]string{}
	for i := range n.Channels {
		c := &n.Channels[i]
		cp := fmt.Sprintf("%s.channels[%d]", p, i)
		c.validate(cp, errs)
		if strings.TrimSpace(c.Name) == "" {
			continue
		}
		tok := ChannelToken(c.Name)
		if tok == "console" {
			errs.add(cp+".name", c.Name, "reserved for notify.console: pick another name")
		}
		if prev, ok := seen[tok]; ok {
			errs.add(cp+".name", c.Name, "clashes with %s: channel names must differ in letters, digits, - or _", prev)
		}
		seen[tok] = cp + ".name"
	}
}

func (c *ChannelConfig) validate(p string, errs *Errors) {
	if strings.TrimSpace(c.Name) == "" {
		errs.add(p+".name", nil, "empty: name the channel, e.g. ops-mail (it names its delivery queue)")
	}
	known := false
	for _, t := range ChannelTypes {
		known = known || c.Type == t
	}
	if !known {
		errs.add(p+".type", c.Type, "must be one of %s", strings.Join(ChannelTypes, ", "))
		return
	}
	if c.MinSeverity != "" {
		oneOf(errs, p+".min_severity", strings.ToLower(c.MinSeverity), "info", "warning", "critical")
	}
	for i, g := range c.Route.Alerts {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" {
			errs.add(fmt.Sprintf("%s.route.alerts[%d]", p, i), g, "not a valid alert name or glob (e.g. PoolDegraded, Smart*)")
		}
	}
	for i, pool := range c.Route.Pools {
		if strings.TrimSpace(pool) == "" {
			errs.add(fmt.Sprintf("%s.route.pools[%d]", p, i), nil, "empty: name a pool")
		}
	}
	c.rejectForeignKeys(p, errs)
	switch c.Type {
	case ChannelEmail:
		c.validateEmail(p, errs)
	case ChannelPushover:
		need(errs, p+".token", c.Token.IsSet(), "empty: set the application API token from https://pushover.net/apps")
		need(errs, p+".user", c.User.IsSet(), "empty: set your user (or group) key from the Pushover dashboard")
		optionalURL(errs, p+".api_url", c.APIURL)
	case ChannelTelegram:
		need(errs, p+".token", c.Token.IsSet(), "empty: set the bot token from @BotFather (123456:ABC-...)")
		if c.Token.IsSet() && !strings.Contains(c.Token.Value, ":") {
			errs.add(p+".token", nil, "does not look like a bot token (digits:letters) from @BotFather")
		}
		if len(c.ChatIDs) == 0 {
			errs.add(p+".chat_ids", nil, "empty: add at least one chat id (send the bot a message, then read it from getUpdates)")
		}
		for i, id := range c.ChatIDs {
			if _, err := strconv.ParseInt(id, 10, 64); err != nil && !(strings.HasPrefix(id, "@") && len(id) > 1) {
				errs.add(fmt.Sprintf("%s.chat_ids[%d]", p, i), id, "want a numeric chat id such as -1001234567890 or a @channelname")
			}
		}
		optionalURL(errs, p+".api_url", c.APIURL)
	case ChannelNtfy:
		optionalURL(errs, p+".url", c.URL)
		if strings.TrimSpace(c.Topic) == "" {
			errs.add(p+".topic", nil, "empty: set the topic to publish to (pick a hard-to-guess name on ntfy.sh)")
		} else if strings.ContainsAny(c.Topic, "/?# ") {
			errs.add(p+".topic", c.Topic, "must be a bare topic name without /, ?, # or spaces")
		}
	case ChannelGotify:
		requiredURL(errs, p+".url", c.URL, "the Gotify server, e.g. https://gotify.example.net")
		need(errs, p+".token", c.Token.IsSet(), "empty: set an application token (Gotify → Apps → create)")
	case ChannelDiscord:
		if !c.WebhookURL.IsSet() {
			errs.add(p+".webhook_url", nil, "empty: set the channel's webhook URL (Server settings → Integrations → Webhooks)")
		} else {
			requiredURL(errs, p+".webhook_url", c.WebhookURL.Value, "a https://discord.com/api/webhooks/... URL")
		}
	case ChannelSlack:
		switch {
		case c.WebhookURL.IsSet() && (c.Token.IsSet() || c.Channel != ""):
			errs.add(p+".webhook_url", nil, "use either webhook_url, or token and channel, not both")
		case c.WebhookURL.IsSet():
			requiredURL(errs, p+".webhook_url", c.WebhookURL.Value, "a https://hooks.slack.com/services/... URL")
		case c.Token.IsSet() || c.Channel != "":
			need(errs, p+".token", c.Token.IsSet(), "empty: set a bot token (xoxb-...) with chat:write, or use webhook_url")
			need(errs, p+".channel", strings.TrimSpace(c.Channel) != "", "empty: set the channel id or #name the bot posts to")
		default:
			errs.add(p+".webhook_url", nil, "empty: set webhook_url, or token and channel")
		}
		optionalURL(errs, p+".api_url", c.APIURL)
	case ChannelWebhook:
		requiredURL(errs, p+".url", c.URL, "the address that receives a JSON POST")
		for k := range c.Headers {
			if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " :\r\n") {
				errs.add(p+".headers", k, "not a valid HTTP header name")
			}
		}
	}
}

func (c *ChannelConfig) validateEmail(p string, errs *Errors) {
	s := c.SMTP
	if strings.TrimSpace(s.Host) == "" {
		errs.add(p+".smtp.host", nil, "empty: set the mail server, e.g. smtp.fastmail.com")
	}
	if s.Port < 0 || s.Port > 65535 {
		errs.add(p+".smtp.port", s.Port, "must be 1-65535 (587 for starttls, 465 for implicit)")
	}
	oneOf(errs, p+".smtp.tls", s.Mode(), TLSStartTLS, TLSImplicit, TLSNone)
	switch {
	case s.Mode() == TLSStartTLS && s.Port == 465:
		errs.add(p+".smtp.tls", s.TLS, "port 465 speaks TLS from the first byte: set tls: implicit (or use port 587 with starttls)")
	case s.Mode() == TLSImplicit && (s.Port == 587 || s.Port == 25):
		errs.add(p+".smtp.tls", s.TLS, "port %d starts in plain text: set tls: starttls (or use port 465 with implicit)", s.Port)
	}
	if (s.Username == "") != !s.Password.IsSet() {
		errs.add(p+".smtp", nil, "username and password go together: set both or neither")
	}
	if s.Mode() == TLSNone && s.Username != "" {
		errs.add(p+".smtp.tls", s.TLS, "refusing to send a password without TLS: use starttls or implicit")
	}
	if s.CAFile != "" {
		if _, err := os.Stat(s.CAFile); err != nil {
			errs.add(p+".smtp.ca_file", s.CAFile, "cannot be read: %v", err)
		}
	}
	if strings.TrimSpace(c.From) == "" {
		errs.add(p+".from", nil, "empty: set the sender address, e.g. zwatch@example.net")
	} else if _, err := mail.ParseAddress(c.From); err != nil {
		errs.add(p+".from", c.From, "not an email address: %v", err)
	}
	if len(c.To) == 0 {
		errs.add(p+".to", nil, "empty: add at least one recipient")
	}
	for i, to := range c.To {
		if _, err := mail.ParseAddress(to); err != nil {
			errs.add(fmt.Sprintf("%s.to[%d]", p, i), to, "not an email address: %v", err)
		}
	}
}

// rejectForeignKeys names keys set on a channel whose type does not use them.
func (c *ChannelConfig) rejectForeignKeys(p string, errs *Errors) {
	uses := map[string][]string{
		ChannelEmail:    {"smtp", "from", "to"},
		ChannelPushover: {"token", "user", "api_url"},
		ChannelTelegram: {"token", "chat_ids", "api_url"},
		ChannelNtfy:     {"url", "topic", "token"},
		ChannelGotify:   {"url", "token"},
		ChannelDiscord:  {"webhook_url"},
		ChannelSlack:    {"webhook_url", "token", "channel", "api_url"},
		ChannelWebhook:  {"url", "headers"},
	}[c.Type]
	set := map[string]bool{
		"smtp": c.SMTP != (SMTPConfig{}), "from": c.From != "", "to": len(c.To) > 0,
		"token": c.Token.IsSet(), "user": c.User.IsSet(), "chat_ids": len(c.ChatIDs) > 0,
		"url": c.URL != "", "topic": c.Topic != "", "webhook_url": c.WebhookURL.IsSet(),
		"channel": c.Channel != "", "headers": len(c.Headers) > 0, "api_url": c.APIURL != "",
	}
	for _, k := range []string{"smtp", "from", "to", "token", "user", "chat_ids", "url", "topic", "webhook_url", "channel", "headers", "api_url"} {
		if !set[k] {
			continue
		}
		ok := false
		for _, u := range uses {
			ok = ok || u == k
		}
		if !ok {
			errs.add(p+"."+k, nil, "not used by type %s (its keys: %s)", c.Type, strings.Join(uses, ", "))
		}
	}
}

func need(errs *Errors, p string, ok bool, problem string) {
	if !ok {
		errs.add(p, nil, "%s", problem)
	}
}

func optionalURL(errs *Errors, p, v string) {
	if v != "" {
		requiredURL(errs, p, v, "an http:// or https:// URL")
	}
}

func requiredURL(errs *Errors, p, v, want string) {
	if strings.TrimSpace(v) == "" {
		errs.add(p, nil, "empty: set %s", want)
		return
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.add(p, redactURL(v), "want %s", want)
	}
}

// redactURL keeps a URL's scheme and host for an error message; the path of
// a webhook URL is its secret.
func redactURL(v string) string {
	if u, err := url.Parse(v); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host + "/…"
	}
	if len(v) > 12 {
		return v[:12] + "…"
	}
	return v
}

func (n *NotifyConfig) hasLiteralSecret() bool {
	for _, c := range n.Channels {
		if c.Token.Literal || c.User.Literal || c.WebhookURL.Literal || c.SMTP.Password.Literal {
			return true
		}
		for _, h := range c.Headers {
			if h.Literal {
				return true
			}
		}
	}
	return false
}
