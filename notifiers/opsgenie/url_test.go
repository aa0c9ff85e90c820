package opsgenie_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/opsgenie"
)

// The URL form is shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/opsgenie/
// (opsgenie://host:port/apikey, host api.opsgenie.com or api.eu.opsgenie.com,
// https on port 443 unless given). apprise's opsgenie://{apikey}/@{user}
// (https://github.com/caronc/apprise/wiki/Notify_opsgenie) is refused.
func TestOpsgenieURL(t *testing.T) {
	lit := notifytest.Lit
	notifytest.CheckURLs(t, opsgenie.Service, []string{apiKey, "hunter2pass"}, []notifytest.URLCase{
		{URL: "opsgenie://api.opsgenie.com/" + apiKey, Want: opsgenie.Config{APIKey: lit(apiKey)}, Masked: "opsgenie://api.opsgenie.com/***"},
		{URL: "opsgenie:///" + apiKey + "/", Want: opsgenie.Config{APIKey: lit(apiKey)}, Masked: "opsgenie:///***/"},
		{URL: "opsgenie://API.opsgenie.com:443/" + apiKey, Want: opsgenie.Config{APIKey: lit(apiKey)}, Masked: "opsgenie://API.opsgenie.com:443/***"},
		{URL: "opsgenie://api.eu.opsgenie.com/" + apiKey, Want: opsgenie.Config{APIKey: lit(apiKey), APIURL: opsgenie.EUAPI},
			Masked: "opsgenie://api.eu.opsgenie.com/***"},
		{URL: "opsgenie://relay.example.net:8443/" + apiKey, Want: opsgenie.Config{APIKey: lit(apiKey), APIURL: "https://relay.example.net:8443"},
			Masked: "opsgenie://relay.example.net:8443/***"},
		{URL: "opsgenie://192.168.1.5:8080/" + apiKey + "?disabletls=yes", Want: opsgenie.Config{APIKey: lit(apiKey), APIURL: "http://192.168.1.5:8080"},
			Masked: "opsgenie://192.168.1.5:8080/***?disabletls=yes"},
		{URL: "opsgenie://relay/" + apiKey, Want: opsgenie.Config{APIKey: lit(apiKey), APIURL: "https://relay"}, Masked: "opsgenie://relay/***"},

		{URL: "opsgenie://api.opsgenie.com/", Err: "path: no API key: write opsgenie://api.opsgenie.com/API_KEY"},
		{URL: "opsgenie://api.opsgenie.com/v2/" + apiKey, Err: "path: has 2 segments: the API key is the only one"},
		{URL: "opsgenie://api.opsgenie.com/a%20" + apiKey, Err: "path segment 1: holds a space"},
		{URL: "opsgenie://" + apiKey + "/", Err: "host: holds the API key: apprise's opsgenie://API_KEY form is not read"},
		{URL: "opsgenie://" + apiKey + "/@phil/%23ops", Err: "host: holds the API key"},
		// A refused parameter's error masks the key written as the host too.
		{URL: "opsgenie://" + apiKey + "/?tags=a", Err: `notify.channels[0].url = "opsgenie://***/…": query parameter tags`},
		{URL: "opsgenie://me:hunter2pass@api.opsgenie.com/" + apiKey, Err: "user: an Opsgenie URL has none"},
		{URL: "opsgenie://:8080/" + apiKey + "?disabletls=yes", Err: "host: empty: write the proxy's address"},
		{URL: "opsgenie://api.opsgenie.com:http/" + apiKey, Err: "port: not a number"},
		{URL: "opsgenie://api.opsgenie.com/" + apiKey + "?disabletls=perhaps", Err: `query parameter disabletls: "perhaps" is not yes or no`},
		{URL: "opsgenie://api.opsgenie.com/" + apiKey + "?alias=x", Err: "query parameter alias: zwatch derives each alert's alias from its group and fingerprint"},
		{URL: "opsgenie://api.opsgenie.com/" + apiKey + "?priority=P1", Err: "query parameter priority: zwatch sets P1 for critical"},
		{URL: "opsgenie://api.opsgenie.com/" + apiKey + "?visibleTo=x", Err: "query parameter visibleTo: route alerts in Opsgenie"},
		{URL: "opsgenie://api.opsgenie.com/" + apiKey + "?tags=a", Err: "query parameter tags: zwatch fills the alert's fields"},
		{URL: "opsgenie://api.opsgenie.com/" + apiKey + "?disabeltls=yes", Err: `query parameter disabeltls: not read by opsgenie URLs: did you mean "disabletls"?`},
	})
}
