package webhook_test

import (
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/webhook"
)

// The URL form is shoutrrr's generic service:
// https://containrrr.dev/shoutrrr/v0.8/services/generic/ (generic+https://…,
// generic://… for https, disabletls, @Header=value, other parameters passed on).
func TestWebhookURL(t *testing.T) {
	const tok = "Bearer s3cr3t-t0ken"
	hdr := func(kv ...string) map[string]config.Secret {
		m := map[string]config.Secret{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = notifytest.Lit(kv[i+1])
		}
		return m
	}
	notifytest.CheckURLs(t, webhook.Service, []string{"s3cr3t-t0ken"}, []notifytest.URLCase{
		{URL: "generic+https://hooks.example.net/zwatch?@Authorization=Bearer+s3cr3t-t0ken",
			Want:   webhook.Config{URL: "https://hooks.example.net/zwatch", Headers: hdr("Authorization", tok)},
			Masked: "generic+https://hooks.example.net/zwatch?@Authorization=***"},
		{URL: "generic://hooks.example.net/api/v1/post%20stuff?source=nas&@acceptLanguage=tlh-Piqd",
			Want:   webhook.Config{URL: "https://hooks.example.net/api/v1/post%20stuff?source=nas", Headers: hdr("Accept-Language", "tlh-Piqd")},
			Masked: "generic://hooks.example.net/api/v1/post%20stuff?source=nas&@acceptLanguage=***"},
		{URL: "generic+http://192.168.1.5:8080/hook", Want: webhook.Config{URL: "http://192.168.1.5:8080/hook"}, Masked: "generic+http://192.168.1.5:8080/hook"},
		{URL: "generic://ha.lan:8123/api/webhook/nas?DisableTLS=yes", Want: webhook.Config{URL: "http://ha.lan:8123/api/webhook/nas"}, Masked: "generic://ha.lan:8123/api/webhook/nas?DisableTLS=yes"},
		{URL: "generic+http://ha.lan/x?disabletls=no", Want: webhook.Config{URL: "https://ha.lan/x"}, Masked: "generic+http://ha.lan/x?disabletls=no"},

		{URL: "generic+https:///hook", Err: "host: empty: write the receiver's address"},
		{URL: "generic+https://u:p@hooks.example.net/", Err: "user: zwatch sends no user and password in the URL"},
		{URL: "generic://hooks.example.net:0/", Err: `port: "0" is not a port`},
		{URL: "generic://hooks.example.net/?template=json", Err: "query parameter template: zwatch posts its own JSON payload"},
		{URL: "generic://hooks.example.net/?method=GET", Err: "query parameter method: zwatch always POSTs"},
		{URL: "generic://hooks.example.net/?$projection=x", Err: "query parameter $projection: extra JSON fields are not sent"},
		{URL: "generic://hooks.example.net/?@=x", Err: "query parameter @: not an HTTP header name"},
		{URL: "generic://hooks.example.net/?disabletls=sometimes", Err: `query parameter disabletls: "sometimes" is not yes or no`},
	})
}
