package discord

import (
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// webhookBase is where Discord's channel webhooks live
// (https://discord.com/developers/docs/resources/webhook#execute-webhook).
const webhookBase = "https://discord.com/api/webhooks/"

// URLForm reads shoutrrr's Discord URL
// (https://containrrr.dev/shoutrrr/v0.8/services/discord/): the webhook
// https://discord.com/api/webhooks/WEBHOOK_ID/TOKEN written as
//
//	discord://TOKEN@WEBHOOK_ID
//
// apprise's discord://WEBHOOK_ID/TOKEN is not read.
func (Config) URLForm() channel.URLForm[Config] {
	const presentation = "zwatch formats each message itself: remove it"
	refused := map[string]string{
		"title": "zwatch titles each message with its alert: remove it", "username": "zwatch posts as zwatch: remove it",
		"avatar": "zwatch posts with the webhook's own avatar: remove it", "splitlines": presentation, "json": presentation,
		"thread_id": "zwatch posts to the webhook's channel, not to a thread: use a webhook of the channel you want",
	}
	refused["avatarurl"] = refused["avatar"]
	for _, k := range []string{"color", "colorerror", "colorwarn", "colorinfo", "colordebug"} {
		refused[k] = presentation
	}
	return channel.URLForm[Config]{Schemes: []string{"discord"}, Refused: refused, Decode: fromURL}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	token, password, ok := u.User()
	if token != "" {
		u.Secret(token)
	}
	id := u.Host()
	switch {
	case !ok || token == "":
		return c, channel.Errorf("user", "no webhook token: from https://discord.com/api/webhooks/WEBHOOK_ID/TOKEN write discord://TOKEN@WEBHOOK_ID (apprise's discord://WEBHOOK_ID/TOKEN is not read)")
	case password != "":
		u.Secret(password)
		return c, channel.Errorf("password", "a Discord URL has none: discord://TOKEN@WEBHOOK_ID")
	case id == "":
		return c, channel.Errorf("host", "empty: the webhook id is the host, discord://TOKEN@WEBHOOK_ID")
	case strings.Trim(id, "0123456789") != "":
		return c, channel.Errorf("host", "not a webhook id: it is the number after /api/webhooks/ in the webhook's URL")
	case u.HostPort() != id:
		return c, channel.Errorf("port", "a Discord URL has none: discord://TOKEN@WEBHOOK_ID")
	}
	switch segs := u.Segments(); {
	case len(segs) == 1 && segs[0] == "raw":
		return c, channel.Errorf("path", "/raw posts the message as JSON: zwatch posts its own message, remove /raw")
	case len(segs) > 0:
		return c, channel.Errorf("path", "a Discord URL has none: discord://TOKEN@WEBHOOK_ID")
	}
	c.WebhookURL = u.Secret(webhookBase + id + "/" + token)
	return c, nil
}
