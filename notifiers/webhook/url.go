package webhook

import (
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's generic webhook URL
// (https://containrrr.dev/shoutrrr/v0.8/services/generic/): the receiver's
// own URL with generic+ in front, or generic:// for https.
//
//	generic+https://hooks.example.net/zwatch?@Authorization=Bearer+TOKEN
//	generic://hooks.example.net/zwatch            https
//	generic+http://192.168.1.5:8080/zwatch        plain http, for a receiver on your own network
//
// disabletls=yes makes it http too. A parameter @Name=value is sent as the
// header Name (its value is a secret); every other parameter stays in the
// receiver's URL, as shoutrrr passes them on. zwatch posts its own JSON
// payload, so shoutrrr's template parameters are refused.
func (Config) URLForm() channel.URLForm[Config] {
	const payload = "zwatch posts its own JSON payload (docs/notifications.md): remove it"
	return channel.URLForm[Config]{
		Schemes: []string{"generic", "generic+https", "generic+http"},
		Refused: map[string]string{
			"template": payload, "titlekey": payload, "messagekey": payload, "title": payload,
			"contenttype": "zwatch posts application/json: remove it", "method": "zwatch always POSTs: remove it",
		},
		Decode: fromURL,
	}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	if _, _, ok := u.User(); ok {
		return c, channel.Errorf("user", "zwatch sends no user and password in the URL: send a header instead, ?@Authorization=Basic+…")
	}
	if u.Host() == "" {
		return c, channel.Errorf("host", "empty: write the receiver's address, generic+https://hooks.example.net/zwatch")
	}
	if _, err := u.Port(); err != nil {
		return c, err
	}
	scheme := "https"
	if u.Scheme() == "generic+http" {
		scheme = "http"
	}
	disable, set, err := u.Bool("disabletls")
	switch {
	case err != nil:
		return c, err
	case set && disable:
		scheme = "http"
	case set:
		scheme = "https"
	}
	var pass []string
	for _, p := range u.Rest() {
		switch {
		case strings.HasPrefix(p.Key, "@"):
			name := headerName(p.Key[1:])
			if name == "" || strings.ContainsAny(name, " :\r\n") {
				return c, channel.Errorf("query parameter "+p.Key, "not an HTTP header name: write @Name=value, e.g. @Authorization=Bearer+TOKEN")
			}
			if c.Headers == nil {
				c.Headers = map[string]config.Secret{}
			}
			c.Headers[name] = u.Secret(p.Value)
		case strings.HasPrefix(p.Key, "$"):
			return c, channel.Errorf("query parameter "+p.Key, "extra JSON fields are not sent: zwatch posts its own JSON payload (docs/notifications.md), remove it")
		default:
			pass = append(pass, p.Raw)
		}
	}
	c.URL = scheme + "://" + u.HostPort() + u.EscapedPath()
	if len(pass) > 0 {
		c.URL += "?" + strings.Join(pass, "&")
	}
	return c, nil
}

// headerName writes a header given as @acceptLanguage as shoutrrr does,
// Accept-Language: a capital starts a new dash-separated word, and each
// word starts with a capital.
func headerName(key string) string {
	var b strings.Builder
	for i, r := range key {
		switch {
		case 'A' <= r && r <= 'Z':
			if i > 0 && key[i-1] != '-' {
				b.WriteByte('-')
			}
		case i == 0 || key[i-1] == '-':
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
