package slack

import (
	"regexp"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// webhookBase is where Slack's incoming webhooks live
// (https://api.slack.com/messaging/webhooks).
const webhookBase = "https://hooks.slack.com/services/"

// URLForm reads shoutrrr's Slack URLs
// (https://containrrr.dev/shoutrrr/v0.8/services/slack/):
//
//	slack://hook:T00000000-B00000000-XXXXXXXXXXXXXXXXXXXXXXXX@webhook   an incoming webhook
//	slack://xoxb:123456789012-1234567890123-abcdefghijklmnopqrstuvwx@C0123456789   a bot, to a channel id
//	slack://T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX          shoutrrr's older webhook form
//
// apprise's slack://TOKEN_A/TOKEN_B/TOKEN_C/#channel is read as the older
// webhook form only without the channel.
func (Config) URLForm() channel.URLForm[Config] {
	const presentation = "zwatch formats each message itself: remove it"
	refused := map[string]string{
		"title": "zwatch titles each message with its alert: remove it", "color": presentation,
		"botname":   "zwatch posts under the webhook's or the bot's own name: remove it",
		"icon":      "zwatch posts with the webhook's or the bot's own icon: remove it",
		"thread_ts": "zwatch posts to the channel, not into a thread: remove it",
	}
	refused["username"], refused["icon_emoji"], refused["icon_url"] = refused["botname"], refused["icon"], refused["icon"]
	return channel.URLForm[Config]{Schemes: []string{"slack"}, Refused: refused, Decode: fromURL}
}

// tokenPattern is shoutrrr's reading of a Slack token: its kind (hook for a
// webhook, xoxb/xoxp for the Web API), then three parts split by one of
// - / , (the same one twice).
var tokenPattern = regexp.MustCompile(`^(?:(xox.|hook)[-:]|:?)([A-Z0-9]{9,})([-/,])([A-Z0-9]{9,})([-/,])([A-Za-z0-9]{24,})$`)

const tokenHelp = "write hook:T…-B…-X… for an incoming webhook (its URL's last three parts), or xoxb:… for a bot token"

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	user, password, hasUser := u.User()
	segs := u.Segments()
	if len(segs) > 0 {
		// The older form: the webhook's three parts as host and path.
		raw := u.Host() + "/" + strings.Join(segs, "/")
		m := tokenPattern.FindStringSubmatch(raw)
		for _, s := range append(segs, u.Host()) {
			u.Secret(s)
		}
		switch {
		case m == nil || m[1] != "" || m[3] != m[5]:
			return c, channel.Errorf("path", "not a webhook's T…/B…/X… parts: %s", tokenHelp)
		case hasUser:
			return c, channel.Errorf("user", "zwatch posts under the webhook's own name: remove the name before @")
		}
		c.WebhookURL = u.Secret(webhookBase + m[2] + "/" + m[4] + "/" + m[6])
		return c, nil
	}
	raw := user
	if password != "" {
		raw += ":" + password
		u.Secret(password)
	}
	m := tokenPattern.FindStringSubmatch(raw)
	switch {
	case !hasUser || raw == "":
		return c, channel.Errorf("user", "no token: %s, slack://hook:T…-B…-X…@webhook or slack://xoxb:…@CHANNEL_ID", tokenHelp)
	case m == nil:
		return c, channel.Errorf("password", "not a Slack token: %s", tokenHelp)
	case m[3] != m[5]:
		return c, channel.Errorf("password", "the token's three parts are split by different characters: use - between all of them")
	}
	kind := m[1]
	if kind == "" {
		kind = "hook"
	}
	if kind == "hook" {
		if !strings.EqualFold(u.HostPort(), "webhook") {
			return c, channel.Errorf("host", "a webhook posts to its own channel: write @webhook, slack://hook:T…-B…-X…@webhook")
		}
		c.WebhookURL = u.Secret(webhookBase + m[2] + "/" + m[4] + "/" + m[6])
		return c, nil
	}
	c.Token = u.Secret(kind + "-" + m[2] + "-" + m[4] + "-" + m[6])
	switch c.Channel = u.Host(); {
	case c.Channel == "":
		return c, channel.Errorf("host", "no channel: a bot posts to the channel id given as the host, slack://xoxb:…@C0123456789")
	case u.HostPort() != c.Channel:
		return c, channel.Errorf("port", "a Slack URL has none: the host is the channel id")
	}
	return c, nil
}
