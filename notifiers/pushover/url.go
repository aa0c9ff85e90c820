package pushover

import (
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's Pushover URL
// (https://containrrr.dev/shoutrrr/v0.8/services/pushover/):
//
//	pushover://shoutrrr:APP_TOKEN@USER_KEY/[?devices=phone,tablet][&priority=1]
//
// The user name before the colon is not used. apprise's pover:// puts the
// user key first and is not read.
func (Config) URLForm() channel.URLForm[Config] {
	return channel.URLForm[Config]{
		Schemes:    []string{"pushover"},
		Refused:    map[string]string{"title": "zwatch titles each message with its alert: remove it"},
		SecretHost: true,
		Decode:     fromURL,
	}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	_, token, ok := u.User()
	if token != "" {
		c.Token = u.Secret(token)
	}
	if user := u.Host(); user != "" {
		c.User = u.Secret(user)
	}
	switch {
	case !ok || token == "":
		return c, channel.Errorf("password", "empty: the application's API token goes after the colon, pushover://shoutrrr:APP_TOKEN@USER_KEY/")
	case !c.User.IsSet():
		return c, channel.Errorf("host", "empty: the user (or group) key is the host, pushover://shoutrrr:APP_TOKEN@USER_KEY/")
	case u.HostPort() != u.Host():
		return c, channel.Errorf("port", "a Pushover URL has none: pushover://shoutrrr:APP_TOKEN@USER_KEY/")
	case len(u.Segments()) > 0:
		return c, channel.Errorf("path", "a Pushover URL has none: name devices in the query, ?devices=phone,tablet")
	}
	if v, ok := u.Param("devices"); ok {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); !validDevice(d) {
				return c, channel.Errorf("query parameter devices", "%q is not a device name: up to 25 letters, digits, - and _, comma-separated", d)
			}
			c.Devices = append(c.Devices, d)
		}
	}
	if v, ok := u.Param("priority"); ok {
		p, err := strconv.Atoi(v)
		switch {
		case err == nil && p == 2:
			return c, channel.Errorf("query parameter priority", "emergency (2) needs retry and expire, which zwatch does not send: use 1 (high)")
		case err != nil || p < -2 || p > 1:
			return c, channel.Errorf("query parameter priority", "%q is not a Pushover priority: use -2 (lowest), -1 (quiet), 0 (normal) or 1 (high)", v)
		}
		c.Priority = &p
	}
	return c, nil
}
