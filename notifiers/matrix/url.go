package matrix

import (
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's Matrix URL
// (https://containrrr.dev/shoutrrr/v0.8/services/matrix/), with the access
// token after an empty user:
//
//	matrix://:ACCESS_TOKEN@host[:port]/?rooms=!roomID:server[&disableTLS=yes]
//	matrix://:ACCESS_TOKEN@host/?rooms=%23alias:server    an alias (# written %23, or left out)
//
// zwatch posts as a bot with its access token into one room, so shoutrrr's
// password login (user:password@), several rooms and "every joined room"
// (no rooms) are refused with the way to write it.
func (Config) URLForm() channel.URLForm[Config] {
	return channel.URLForm[Config]{
		Schemes: []string{"matrix"},
		Refused: map[string]string{
			"title":    "zwatch titles each message with its alert: remove it",
			"deviceid": "only for a password login, which zwatch does not do (it sends with the access token): remove it",
		},
		Decode: fromURL,
	}
}

const tokenHelp = "write the bot's access token after an empty user, matrix://:ACCESS_TOKEN@host (Element: Settings → Help & About → Access token)"

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	user, password, ok := u.User()
	switch {
	case !ok || user == "" && password == "":
		return c, channel.Errorf("user", "no access token: %s", tokenHelp)
	case user != "" && password != "":
		u.Secret(password)
		return c, channel.Errorf("user", "zwatch does not log in with a user and password (m.login.password): %s", tokenHelp)
	case password == "":
		u.Secret(user)
		return c, channel.Errorf("password", "empty: the access token goes after a colon, %s", tokenHelp)
	}
	c.AccessToken = u.Secret(password)
	if u.Host() == "" {
		return c, channel.Errorf("host", "empty: write the homeserver, matrix://:TOKEN@matrix.example.org/?rooms=!roomID:example.org")
	}
	if _, err := u.Port(); err != nil {
		return c, err
	}
	if len(u.Segments()) > 0 {
		return c, channel.Errorf("path", "a Matrix URL has none: the room goes in ?rooms=!roomID:server")
	}
	disable, _, err := u.Bool("disabletls")
	if err != nil {
		return c, err
	}
	scheme := "https"
	if disable {
		scheme = "http"
	}
	c.Homeserver = scheme + "://" + u.HostPort()
	rooms, _ := u.Param("rooms", "room")
	var list []string
	for _, r := range strings.Split(rooms, ",") {
		if r = strings.TrimSpace(r); r != "" {
			list = append(list, r)
		}
	}
	switch {
	case len(list) == 0:
		return c, channel.Errorf("query parameter rooms", "no room: zwatch posts into one room, not into every joined room as shoutrrr does without rooms; write ?rooms=!roomID:server or ?rooms=%%23alias:server")
	case len(list) > 1:
		return c, channel.Errorf("query parameter rooms", "names %d rooms: a channel posts into one, so write one matrix:// URL per room", len(list))
	case strings.HasPrefix(list[0], "@"):
		return c, channel.Errorf("query parameter rooms", "%q is a user, not a room: invite that user and the bot into a room and write its ID (!…) or alias", list[0])
	}
	// As shoutrrr does, a room that is neither an ID nor an alias is an
	// alias whose # was left out (a bare # would end the URL).
	c.Room = list[0]
	if !strings.HasPrefix(c.Room, "!") && !strings.HasPrefix(c.Room, "#") {
		c.Room = "#" + c.Room
	}
	if local, server, ok := strings.Cut(c.Room[1:], ":"); c.Room[0] == '#' && (!ok || local == "" || server == "") {
		return c, channel.Errorf("query parameter rooms", "%q is no room ID (!…) and an alias without its server: write ?rooms=%%23nas-alerts:example.org or ?rooms=!roomID", list[0])
	}
	return c, nil
}
