package opsgenie

import (
	"net"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's Opsgenie URL
// (https://containrrr.dev/shoutrrr/v0.8/services/opsgenie/):
//
//	opsgenie://api.opsgenie.com/API_KEY
//	opsgenie://api.eu.opsgenie.com/API_KEY      the EU instance
//	opsgenie://host[:port]/API_KEY              a proxy, https
//
// disabletls=yes, zwatch's own, makes a proxy on your own network http.
// zwatch fills every field of the alert itself (its alias closes it when
// the alert resolves), so shoutrrr's alert fields are refused. apprise's
// opsgenie://API_KEY/@user/#team is not read.
func (Config) URLForm() channel.URLForm[Config] {
	const own = "zwatch fills the alert's fields from each zwatch alert: remove it"
	refused := map[string]string{
		"alias":      "zwatch derives each alert's alias from its group and fingerprint, so that the resolved notice closes it: remove it",
		"priority":   "zwatch sets P1 for critical, P3 for warning, P5 for info: remove it (Opsgenie's alert policies can change it)",
		"responders": "route alerts in Opsgenie (the API integration's team, its routing rules): remove it",
		"title":      "zwatch titles each alert with its summary: remove it",
	}
	refused["visibleto"] = refused["responders"]
	for _, k := range []string{"description", "actions", "tags", "details", "entity", "source", "note", "user"} {
		refused[k] = own
	}
	return channel.URLForm[Config]{Schemes: []string{"opsgenie"}, Refused: refused, Decode: fromURL}
}

const keyHelp = "opsgenie://api.opsgenie.com/API_KEY (api.eu.opsgenie.com for the EU instance), the key of an API integration (Settings → Integrations → API)"

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	segs := u.Segments()
	for _, s := range segs {
		u.Secret(s)
	}
	if _, password, ok := u.User(); ok {
		u.Secret(password)
		return c, channel.Errorf("user", "an Opsgenie URL has none: write %s", keyHelp)
	}
	host := strings.ToLower(u.Host())
	if looksLikeKey(host, segs) {
		u.Secret(u.Host())
		return c, channel.Errorf("host", "holds the API key: apprise's opsgenie://API_KEY form is not read; write shoutrrr's %s", keyHelp)
	}
	port, err := u.Port()
	if err != nil {
		return c, err
	}
	switch {
	case len(segs) == 0:
		return c, channel.Errorf("path", "no API key: write %s", keyHelp)
	case len(segs) > 1:
		return c, channel.Errorf("path", "has %d segments: the API key is the only one, and zwatch's API base takes no sub path; write %s", len(segs), keyHelp)
	case strings.ContainsAny(segs[0], " \t"):
		return c, channel.Errorf("path segment 1", "holds a space: copy the API key again, %s", keyHelp)
	}
	c.APIKey = u.Secret(segs[0])
	disable, _, err := u.Bool("disabletls")
	if err != nil {
		return c, err
	}
	scheme := "https"
	if disable {
		scheme = "http"
	}
	switch {
	case host == "" && (disable || port != 0):
		return c, channel.Errorf("host", "empty: write the proxy's address, opsgenie://192.168.1.5:8080/API_KEY?disabletls=yes, or leave out the port for Opsgenie's own")
	case disable:
		c.APIURL = scheme + "://" + u.HostPort()
	case (host == "" || host == "api.opsgenie.com") && (port == 0 || port == 443):
		// Opsgenie's own, the default.
	case host == "api.eu.opsgenie.com" && (port == 0 || port == 443):
		c.APIURL = EUAPI
	default:
		c.APIURL = scheme + "://" + u.HostPort()
	}
	return c, nil
}

// looksLikeKey tells apprise's opsgenie://API_KEY[/@user/#team] from a
// host: a single label that is no name a server goes by, with no key
// after it.
func looksLikeKey(host string, segs []string) bool {
	if host == "" || strings.Contains(host, ".") || host == "localhost" || net.ParseIP(host) != nil {
		return false
	}
	for _, s := range segs {
		if !strings.ContainsAny(s[:min(len(s), 1)], "@#*^") {
			return false
		}
	}
	return true
}
