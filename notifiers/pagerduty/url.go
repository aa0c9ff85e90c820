package pagerduty

import (
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads the newer shoutrrr's PagerDuty URL
// (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/incident/pagerduty/index.md;
// shoutrrr v0.8 has no PagerDuty):
//
//	pagerduty:///INTEGRATION_KEY                            events.pagerduty.com
//	pagerduty://events.eu.pagerduty.com/INTEGRATION_KEY     the EU service region
//	pagerduty://host[:port]/INTEGRATION_KEY                 a proxy: https://host/v2/enqueue
//	…?client_url=https://nas1.example.net:9617/             the status page PagerDuty links to
//
// disabletls=yes, zwatch's own, makes a proxy on your own network http.
// zwatch triggers and resolves each alert itself, with its own severity,
// source and dedup key, so shoutrrr's event fields are refused. apprise's
// pagerduty://INTEGRATION_KEY@API_KEY is not read: the Events API needs no
// REST API key.
func (Config) URLForm() channel.URLForm[Config] {
	const own = "zwatch fills the event from each zwatch alert: remove it"
	return channel.URLForm[Config]{
		Schemes: []string{"pagerduty"},
		Refused: map[string]string{
			"severity":  "zwatch maps each alert's severity (critical, warning, info) to PagerDuty's: remove it",
			"action":    "zwatch triggers an alert when it fires and resolves it when it ends: remove it",
			"dedup_key": "zwatch derives each alert's dedup_key from its group and fingerprint, so that the resolve matches the trigger: remove it",
			"source":    "zwatch sends the host the alert is about as the source: remove it",
			"client":    "zwatch names itself, zwatch on <host>, beside client_url: remove it",
			"details":   own, "contexts": own, "component": own, "group": own, "class": own, "click": own, "image": own,
			"region": "write the EU service region's host instead, pagerduty://events.eu.pagerduty.com/INTEGRATION_KEY",
		},
		Decode: fromURL,
	}
}

const keyHelp = "pagerduty:///INTEGRATION_KEY, the Integration Key of an Events API v2 integration (PagerDuty → Services → your service → Integrations)"

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	segs := u.Segments()
	for _, s := range segs {
		u.Secret(s)
	}
	if user, password, ok := u.User(); ok {
		u.Secret(user)
		u.Secret(password)
		u.Secret(u.Host())
		return c, channel.Errorf("user", "apprise's pagerduty://INTEGRATION_KEY@API_KEY form is not read: the Events API needs only the integration key, no REST API key; write %s", keyHelp)
	}
	port, err := u.Port()
	if err != nil {
		return c, err
	}
	switch k := strings.Join(segs, "/"); {
	case len(segs) == 0:
		return c, channel.Errorf("path", "no integration key: write %s", keyHelp)
	case len(segs) > 1:
		return c, channel.Errorf("path", "has %d segments: the integration key is the only one; write %s", len(segs), keyHelp)
	case len(k) != keyLen || strings.IndexFunc(k, notAlnum) >= 0:
		return c, channel.Errorf("path segment 1", "has %d characters, not the 32 letters and digits of an integration key (a REST API key does not work): write %s", len(k), keyHelp)
	}
	c.RoutingKey = u.Secret(segs[0])
	disable, _, err := u.Bool("disabletls")
	if err != nil {
		return c, err
	}
	host := strings.ToLower(u.Host())
	switch {
	case host == "" && (disable || port != 0):
		return c, channel.Errorf("host", "empty: write the proxy's address, pagerduty://192.168.1.5:8080/INTEGRATION_KEY?disabletls=yes, or leave out the port for PagerDuty's own")
	case disable:
		c.URL = "http://" + u.HostPort() + "/v2/enqueue"
	case (host == "" || host == "events.pagerduty.com") && (port == 0 || port == 443):
		// PagerDuty's own, the default.
	case host == "events.eu.pagerduty.com" && (port == 0 || port == 443):
		c.URL = EUURL
	default:
		c.URL = "https://" + u.HostPort() + "/v2/enqueue"
	}
	if v, ok := u.Param("client_url"); ok {
		if lower := strings.ToLower(v); !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") {
			return c, channel.Errorf("query parameter client_url", "%q is not an http(s):// URL: write the address of zwatch's status page as you reach it", v)
		}
		c.ClientURL = v
	}
	return c, nil
}
