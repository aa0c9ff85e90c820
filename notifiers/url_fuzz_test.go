package notifiers_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// A channel URL is whatever a person pasted: every service's URL form must
// answer any input with settings or an error, never a panic; settings it
// accepts must validate without panicking, and neither the masked URL nor
// an error may show a credential.
func FuzzChannelURL(f *testing.F) {
	for _, seed := range []string{
		"ntfy://:tk_abcdefgh123@ntfy.example.net:8443/sub/topic?priority=high&scheme=http",
		"ntfy://user:pass%2Fword@[::1]/t",
		"smtp://me%40example.net:s3cretpass@smtp.example.net:465/?from=a@example.net&to=b@example.net,c@example.net&fromname=NAS",
		"pushover://shoutrrr:azGDORePK8gMaC0QOYAMyEEuzJnyUi@uQiRzpo4DXghDmr9QzzfQu27cmVRsG/?devices=a,b&priority=-1",
		"telegram://110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw@telegram?chats=@x,-100123",
		"gotify://g.example/sub/AzyoeNS.D4iJLVa?disabletls=yes&priority=8",
		"discord://JHMHI8qBe7bk2ZwO5U711o3dV_js@4174216298",
		"slack://hook:T00000000-B00000000-XXXXXXXXXXXXXXXXXXXXXXXX@webhook",
		"slack://T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
		"generic+https://h.example/p?@Authorization=Bearer+abcdefghijk&x=abcdefghijk",
		"ntfy://:abc%2Fdefghij@h/abc/defghij",
		"matrix://:syt_abcdefgh123@matrix.example.org:8448/?rooms=%23nas:example.org&disableTLS=yes",
		"matrix://bot:hunter2pass@m.example.org/?rooms=!a:b,!c:d&room=x",
		"mattermost://zwatch@chat.example.net/bywsw8zt5jgpte3nm65qjiru6h/nas-alerts?icon=https://x/i.png&disabletls=yes",
		"teams://?host=https%3A%2F%2Fprod-00.westus.logic.azure.com%3A443%2Fworkflows%2Fa%2Finvoke%3Fapi-version%3D1%26sig%3Dabcdefghijk",
		"teams+https://prod-00.westus.logic.azure.com:443/workflows/a/invoke?api-version=1&sp=%2Ftriggers&sig=abcdefghijk",
		"teams://0c8e2f57@9a1b/altId/owner?host=x.webhook.office.com",
		"opsgenie://api.eu.opsgenie.com:443/eb243592-faa2-4ba2-a551-1afdf565c889?disabletls=no",
		"opsgenie://eb243592-faa2-4ba2-a551-1afdf565c889/@phil/?tags=x",
		"pagerduty:///e93facc04764012d7bfb002500d5d1a6?client_url=https://nas1.example.net/",
		"pagerduty://e93facc04764012d7bfb002500d5d1a6@apikey1234567/src?region=eu",
		"signal://127.0.0.1:8080/+4915112345678/+4915187654321,group.YWJj/@g?disabletls=yes",
		"mqtts://zwatch:mqttpass123@broker.example.net:8883/site/nas?qos=2&clientid=a&client_id=b",
		"x://%zz", "ntfy://a:b@c:d@e/f?%=&=&&", "generic://h/?@%41=1",
	} {
		f.Add(seed)
	}
	services := map[string]int{}
	svcs := notifiers.Services()
	for i, s := range svcs {
		for _, scheme := range s.Schemes() {
			services[scheme] = i
		}
	}
	f.Fuzz(func(t *testing.T, raw string) {
		scheme, _, _ := strings.Cut(raw, "://")
		i, ok := services[strings.ToLower(scheme)]
		if !ok {
			return
		}
		s, masked, errs := notifytest.DecodeURL(svcs[i], raw)
		shown := masked + "\n" + errs.Error()
		for _, sec := range credentials(raw, s) {
			if len(sec) >= 8 && strings.Contains(shown, sec) {
				t.Fatalf("%q shows the credential %q:\n%s", raw, sec, shown)
			}
		}
		if s != nil {
			var verrs config.Errors
			s.Validate("notify.channels[0]", &verrs)
		}
	})
}

// credentials are the URL's password and every secret of the settings it
// decoded to.
func credentials(raw string, s config.ChannelSettings) []string {
	var out []string
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		out = append(out, pw)
	}
	if s == nil {
		return out
	}
	v := reflect.ValueOf(s)
	secretType := reflect.TypeFor[config.Secret]()
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch {
		case v.Type() == secretType:
			out = append(out, v.Interface().(config.Secret).Value)
		case v.Kind() == reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case v.Kind() == reflect.Map:
			for _, k := range v.MapKeys() {
				walk(v.MapIndex(k))
			}
		}
	}
	walk(v)
	return out
}
