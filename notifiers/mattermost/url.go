package mattermost

import (
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's Mattermost URL
// (https://containrrr.dev/shoutrrr/v0.8/services/mattermost/, disabletls
// from https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/chat/mattermost/index.md):
// the incoming webhook https://host/hooks/KEY written as
//
//	mattermost://[username@]host[:port]/KEY[/channel][?icon=https://…/icon.png][&disabletls=yes]
//
// The user names the poster, the second path segment overrides the
// webhook's channel. zwatch sets the poster's picture by URL only, so an
// emoji icon is refused.
func (Config) URLForm() channel.URLForm[Config] {
	return channel.URLForm[Config]{
		Schemes: []string{"mattermost"},
		Refused: map[string]string{"title": "zwatch titles each message with its alert: remove it"},
		Decode:  fromURL,
	}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	segs := u.Segments()
	if len(segs) > 0 {
		u.Secret(segs[0])
	}
	user, password, hasUser := u.User()
	switch {
	case password != "":
		u.Secret(password)
		return c, channel.Errorf("password", "a Mattermost URL has none: the name before @ only names the poster, and the webhook's key is the first path segment")
	case hasUser && user == "":
		return c, channel.Errorf("user", "empty: write the poster's name before @, or leave out the @")
	}
	c.Username = user
	if u.Host() == "" {
		return c, channel.Errorf("host", "empty: write the Mattermost server, mattermost://chat.example.net/KEY")
	}
	if _, err := u.Port(); err != nil {
		return c, err
	}
	switch {
	case len(segs) == 0 || segs[0] == "":
		return c, channel.Errorf("path", "no webhook key: from https://chat.example.net/hooks/KEY write mattermost://chat.example.net/KEY")
	case segs[0] == "hooks":
		return c, channel.Errorf("path segment 1", "is hooks: leave it out, the key alone is the first segment, mattermost://chat.example.net/KEY")
	case strings.Trim(segs[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "":
		return c, channel.Errorf("path segment 1", "not a webhook key (letters and digits, the end of https://chat.example.net/hooks/KEY)")
	case len(segs) > 2:
		return c, channel.Errorf("path segment "+strconv.Itoa(len(segs)), "a Mattermost URL has at most two path segments: the webhook key and a channel")
	}
	if len(segs) == 2 {
		c.Channel = segs[1]
	}
	disable, _, err := u.Bool("disabletls")
	if err != nil {
		return c, err
	}
	scheme := "https"
	if disable {
		scheme = "http"
	}
	c.WebhookURL = u.Secret(scheme + "://" + u.HostPort() + "/hooks/" + segs[0])
	if v, ok := u.Param("icon", "icon_url", "icon_emoji"); ok {
		if lower := strings.ToLower(v); !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") {
			return c, channel.Errorf("query parameter icon", "%q is an emoji: zwatch sets the poster's picture by URL only, icon=https://…/icon.png, or remove it", v)
		}
		c.IconURL = v
	}
	return c, nil
}
