package ntfy

import (
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's ntfy URL
// (https://containrrr.dev/shoutrrr/v0.8/services/ntfy/):
//
//	ntfy://[user:password@]host[:port]/[path/]topic[?priority=high][&scheme=http]
//	ntfy://:tk_token@host/topic        an access token (an empty user)
//
// The host defaults to ntfy.sh and the scheme to https. apprise's
// ntfy://topic (a topic in place of the host) and ntfys:// are not read.
func (Config) URLForm() channel.URLForm[Config] {
	const unused = "zwatch does not send it: remove it"
	return channel.URLForm[Config]{
		Schemes: []string{"ntfy"},
		Refused: map[string]string{
			"title":   "zwatch titles each message with its alert: remove it",
			"tags":    "zwatch tags each message with its severity: remove it",
			"actions": unused, "click": unused, "attach": unused, "filename": unused, "delay": unused, "at": unused,
			"in": unused, "email": unused, "icon": unused, "cache": unused, "firebase": unused,
		},
		Decode: fromURL,
	}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	scheme := "https"
	if v, ok := u.Param("scheme"); ok {
		scheme = strings.ToLower(v)
		if scheme != "http" && scheme != "https" {
			return c, channel.Errorf("query parameter scheme", "%q is not http or https (http only for a server on your own network)", v)
		}
	}
	if _, err := u.Port(); err != nil {
		return c, err
	}
	host := u.HostPort()
	if u.Host() == "" {
		host = "ntfy.sh"
	}
	base, topic, n := u.SplitPath()
	switch {
	case topic == "":
		return c, channel.Errorf("path", "no topic: write it as the path, ntfy://ntfy.sh/mytopic")
	case strings.ContainsAny(topic, "?# "):
		return c, channel.Errorf("path segment "+strconv.Itoa(n), "the topic holds ?, # or a space: use letters, digits, - and _")
	}
	c.URL, c.Topic = scheme+"://"+host+base, topic
	if user, password, ok := u.User(); ok {
		switch {
		case user == "" && password != "":
			c.Token = u.Secret(password)
		case user != "" && password != "":
			c.Username, c.Password = user, u.Secret(password)
		case strings.HasPrefix(user, "tk_"):
			u.Secret(user)
			return c, channel.Errorf("user", "an access token goes after a colon, ntfy://:tk_…@host/topic (apprise's ntfy://tk_…@host/topic is not read)")
		default:
			return c, channel.Errorf("password", "empty: write user:password@, or :TOKEN@ for an access token")
		}
	}
	if v, ok := u.Param("priority"); ok {
		p, err := parsePriority(v)
		if err != nil {
			return c, err
		}
		c.Priority = &p
	}
	return c, nil
}

// parsePriority reads ntfy's priorities by name or number, as shoutrrr and
// ntfy do (https://docs.ntfy.sh/publish/#message-priority).
func parsePriority(v string) (int, error) {
	names := map[string]int{"min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5}
	if p, ok := names[strings.ToLower(v)]; ok {
		return p, nil
	}
	if p, err := strconv.Atoi(v); err == nil && p >= 1 && p <= 5 {
		return p, nil
	}
	return 0, channel.Errorf("query parameter priority", "%q is not an ntfy priority: use min, low, default, high, max (urgent) or 1-5", v)
}
