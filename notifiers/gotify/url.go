package gotify

import (
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's Gotify URL
// (https://containrrr.dev/shoutrrr/v0.8/services/gotify/):
//
//	gotify://host[:port]/[path/]token[?priority=5][&disabletls=yes]
//
// The application token is the last path segment, what comes before it
// the server's sub path; https unless disabletls=yes.
func (Config) URLForm() channel.URLForm[Config] {
	return channel.URLForm[Config]{
		Schemes: []string{"gotify"},
		Refused: map[string]string{"title": "zwatch titles each message with its alert: remove it"},
		Decode:  fromURL,
	}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	base, token, n := u.SplitPath()
	if token != "" {
		c.Token = u.Secret(token)
	}
	if _, _, ok := u.User(); ok {
		return c, channel.Errorf("user", "a Gotify URL has none: the token is the last path segment, gotify://host/TOKEN")
	}
	if u.Host() == "" {
		return c, channel.Errorf("host", "empty: write the server, gotify://gotify.example.net/TOKEN")
	}
	if _, err := u.Port(); err != nil {
		return c, err
	}
	seg := "path segment " + strconv.Itoa(n)
	switch {
	case token == "":
		return c, channel.Errorf("path", "no application token: it is the last path segment, gotify://gotify.example.net/TOKEN")
	case strings.HasPrefix(token, "C"):
		return c, channel.Errorf(seg, "a client token (it starts with C): use an application token (Gotify → Apps), which starts with A")
	case strings.Trim(token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "":
		return c, channel.Errorf(seg, "not a Gotify token (letters, digits, . - _): the application token is the last path segment")
	}
	disable, _, err := u.Bool("disabletls")
	if err != nil {
		return c, err
	}
	scheme := "https"
	if disable {
		scheme = "http"
	}
	c.URL = scheme + "://" + u.HostPort() + base
	if v, ok := u.Param("priority"); ok {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 10 {
			return c, channel.Errorf("query parameter priority", "%q is not a Gotify priority: use 0-10 (8 and above pop up on Android)", v)
		}
		c.Priority = &p
	}
	return c, nil
}
