package pagerduty_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/pagerduty"
)

// The URL form is the newer shoutrrr's
// (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/incident/pagerduty/index.md:
// pagerduty://[host[:port]]/integration-key, default events.pagerduty.com,
// client_url among its parameters). apprise's
// pagerduty://{integrationkey}@{apikey}/{source}/{component}?region=eu
// (https://github.com/caronc/apprise/wiki/Notify_pagerduty) is refused.
func TestPagerDutyURL(t *testing.T) {
	lit := notifytest.Lit
	const apiKey = "u+Xyz12345abcDEF"
	notifytest.CheckURLs(t, pagerduty.Service, []string{routingKey, apiKey}, []notifytest.URLCase{
		{URL: "pagerduty:///" + routingKey, Want: pagerduty.Config{RoutingKey: lit(routingKey)}, Masked: "pagerduty:///***"},
		{URL: "pagerduty://events.pagerduty.com/" + routingKey + "/", Want: pagerduty.Config{RoutingKey: lit(routingKey)},
			Masked: "pagerduty://events.pagerduty.com/***/"},
		{URL: "pagerduty://events.eu.pagerduty.com:443/" + routingKey + "?client_url=https://nas1.example.net:9617/",
			Want:   pagerduty.Config{RoutingKey: lit(routingKey), URL: pagerduty.EUURL, ClientURL: "https://nas1.example.net:9617/"},
			Masked: "pagerduty://events.eu.pagerduty.com:443/***?client_url=https://nas1.example.net:9617/"},
		{URL: "pagerduty://relay.example.net:8443/" + routingKey, Want: pagerduty.Config{RoutingKey: lit(routingKey), URL: "https://relay.example.net:8443/v2/enqueue"},
			Masked: "pagerduty://relay.example.net:8443/***"},
		{URL: "pagerduty://127.0.0.1:8080/" + routingKey + "?DisableTLS=Yes", Want: pagerduty.Config{RoutingKey: lit(routingKey), URL: "http://127.0.0.1:8080/v2/enqueue"},
			Masked: "pagerduty://127.0.0.1:8080/***?DisableTLS=Yes"},

		{URL: "pagerduty://events.pagerduty.com", Err: "path: no integration key: write pagerduty:///INTEGRATION_KEY"},
		{URL: "pagerduty:///v2/" + routingKey, Err: "path: has 2 segments: the integration key is the only one"},
		{URL: "pagerduty:///" + routingKey[:31], Err: "path segment 1: has 31 characters, not the 32 letters and digits of an integration key"},
		{URL: "pagerduty:///" + routingKey[:31] + "-", Err: "path segment 1: has 32 characters"},
		{URL: "pagerduty://" + routingKey + "@" + apiKey + "/nas1/zfs", Err: "user: apprise's pagerduty://INTEGRATION_KEY@API_KEY form is not read"},
		{URL: "pagerduty://" + routingKey + "@" + apiKey + "?region=eu", Err: "query parameter region: write the EU service region's host instead"},
		{URL: "pagerduty://:8080/" + routingKey, Err: "host: empty: write the proxy's address"},
		{URL: "pagerduty://relay:99999/" + routingKey, Err: `port: "99999" is not a port`},
		{URL: "pagerduty:///" + routingKey + "?severity=critical", Err: "query parameter severity: zwatch maps each alert's severity"},
		{URL: "pagerduty:///" + routingKey + "?action=resolve", Err: "query parameter action: zwatch triggers an alert when it fires and resolves it when it ends"},
		{URL: "pagerduty:///" + routingKey + "?dedup_key=x", Err: "query parameter dedup_key: zwatch derives each alert's dedup_key"},
		{URL: "pagerduty:///" + routingKey + "?source=nas", Err: "query parameter source: zwatch sends the host"},
		{URL: "pagerduty:///" + routingKey + "?details={}", Err: "query parameter details: zwatch fills the event"},
		{URL: "pagerduty:///" + routingKey + "?client_url=nas1:9617", Err: `query parameter client_url: "nas1:9617" is not an http(s):// URL`},
		{URL: "pagerduty:///" + routingKey + "?clienturl=x", Err: `query parameter clienturl: not read by pagerduty URLs: did you mean "client_url"?`},
	})
}
