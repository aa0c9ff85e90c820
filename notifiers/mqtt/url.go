package mqtt

import (
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads the MQTT URL of apprise
// (https://github.com/caronc/apprise/wiki/Notify_mqtt) and the newer
// shoutrrr (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/push/mqtt/index.md):
//
//	mqtt://[user[:password]@]host[:1883]/[topic/prefix][?qos=1][&clientid=…]
//	mqtts://[user[:password]@]host[:8883]/[topic/prefix]     TLS
//
// The path is zwatch's topic_prefix, not the one topic those tools publish
// to: zwatch publishes each notification to <path>/<host>/notification and
// keeps its Home Assistant entities beside it (docs/notifications.md); no
// path is the default prefix, zwatch. What zwatch decides itself (retained
// messages, the session, the protocol version, TLS by scheme) is refused.
func (Config) URLForm() channel.URLForm[Config] {
	const retained = "zwatch retains Home Assistant's discovery and state topics and never the notification events: remove it"
	return channel.URLForm[Config]{
		Schemes: []string{"mqtt", "mqtts"},
		Refused: map[string]string{
			"retained": retained, "retain": retained,
			"cleansession": "zwatch keeps no session on the broker (a clean session each time it connects): remove it",
			"session":      "zwatch keeps no session on the broker (a clean session each time it connects): remove it",
			"version":      "zwatch speaks MQTT 3.1.1, which every broker Home Assistant uses takes: remove it",
			"disabletls":   "the scheme says it: mqtt:// is plain, mqtts:// TLS",
			"disabletlsverification": "zwatch always verifies the broker's certificate: trust a private CA or a self-signed certificate with ca_file, " +
				"which only the typed form has (type: mqtt)",
			"title": "zwatch titles each event with its alert: remove it",
			"to":    "the path is the topic prefix, mqtt://host/zwatch: remove it",
		},
		Decode: fromURL,
	}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	if user, password, ok := u.User(); ok {
		if user == "" {
			u.Secret(password)
			return c, channel.Errorf("user", "empty: write the user the broker knows, mqtt://user:password@host")
		}
		c.Username = user
		if password != "" {
			c.Password = u.Secret(password)
		}
	}
	if u.Host() == "" {
		return c, channel.Errorf("host", "empty: write the broker, %s://homeassistant.local/", u.Scheme())
	}
	if _, err := u.Port(); err != nil {
		return c, err
	}
	c.Broker = u.Scheme() + "://" + u.HostPort()
	segs := u.Segments()
	for i, s := range segs {
		if strings.ContainsAny(s, ", ") {
			return c, channel.Errorf("path segment "+strconv.Itoa(i+1), "names several topics (apprise publishes to each): zwatch publishes under one topic prefix, so write one")
		}
		if s == "" || strings.ContainsAny(s, "+#/\x00") || i == 0 && strings.HasPrefix(s, "$") {
			return c, channel.Errorf("path segment "+strconv.Itoa(i+1), "%q is not a topic level zwatch can publish under: write plain levels without +, #, $ or an empty level, mqtt://host/zwatch", s)
		}
	}
	c.TopicPrefix = strings.Join(segs, "/")
	if v, ok := u.Param("qos"); ok {
		q, err := strconv.Atoi(v)
		switch {
		case err == nil && q == 0:
			return c, channel.Errorf("query parameter qos", "0 is not taken: zwatch counts a notification delivered only once the broker acknowledged it, so use 1 or 2")
		case err != nil || q != 1 && q != 2:
			return c, channel.Errorf("query parameter qos", "%q is not an MQTT QoS zwatch uses: 1 (the default) or 2", v)
		}
		c.QoS = &q
	}
	if v, ok := u.Param("clientid", "client_id"); ok {
		c.ClientID = v
	}
	return c, nil
}
