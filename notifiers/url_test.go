package notifiers_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// TestServicesURLSchemes pins the schemes of the URL forms and checks the
// docs show each.
func TestServicesURLSchemes(t *testing.T) {
	want := map[string][]string{
		"email": {"smtp"}, "pushover": {"pushover"}, "telegram": {"telegram"}, "ntfy": {"ntfy"}, "gotify": {"gotify"},
		"discord": {"discord"}, "slack": {"slack"}, "webhook": {"generic", "generic+https", "generic+http"},
		"matrix": {"matrix"}, "mattermost": {"mattermost"}, "teams": {"teams", "teams+https"}, "opsgenie": {"opsgenie"},
		"pagerduty": {"pagerduty"}, "signal": {"signal"}, "mqtt": {"mqtt", "mqtts"}, "exec": nil,
	}
	doc, err := os.ReadFile("../docs/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range notifiers.Services() {
		if w, ok := want[s.Name()]; ok && !slices.Equal(s.Schemes(), w) {
			t.Errorf("%s schemes %v, want %v", s.Name(), s.Schemes(), w)
		}
		for _, scheme := range s.Schemes() {
			if !strings.Contains(string(doc), scheme+"://") {
				t.Errorf("docs/notifications.md shows no %s:// URL", scheme)
			}
		}
	}
}

// Channels written as URLs are decoded by config.Parse, shown masked by
// check-config, and delivered by the real outbox to real local servers.
func TestURLChannelsDeliverThroughTheOutbox(t *testing.T) {
	ntfySrv := notifytest.StartHTTP(t, `{"id":"x"}`)
	gotifySrv := notifytest.StartHTTP(t, `{"id":1}`)
	hookSrv := notifytest.StartHTTP(t, `{}`)
	mail := notifytest.StartSMTP(t, notifytest.SinkPlain, nil, "", "", "")
	host := func(s *notifytest.HTTPSink) string { return strings.TrimPrefix(s.URL, "http://") }
	l, err := parseConfig(t, fmt.Sprintf(`
notify:
  console: false
  channels:
    - url: "ntfy://:tk_ntfysecret1@%s/nas1-alerts?scheme=http&priority=high"
    - {url: "gotify://%s/AgotifySecret2?disabletls=yes", min_severity: critical}
    - url: "generic+http://%s/hook?src=nas&@Authorization=Bearer+hookSecret3"
    - {name: mail, url: "smtp://127.0.0.1:%d/?from=zwatch@nas1.example.net&to=ops@example.net&encryption=None"}
    - {name: ntfy, type: ntfy, url: "http://127.0.0.1:1", topic: taken}
`, host(ntfySrv), host(gotifySrv), host(hookSrv), mail.Port))
	if err != nil {
		t.Fatal(err)
	}
	chs := l.Config.Notify.Channels
	var names []string
	for _, c := range chs {
		names = append(names, c.Name+"/"+c.Type)
	}
	// Unnamed URL channels are named after their scheme, clear of the names given.
	if want := []string{"ntfy-2/ntfy", "gotify/gotify", "generic/webhook", "mail/email", "ntfy/ntfy"}; !slices.Equal(names, want) {
		t.Errorf("channels %v, want %v", names, want)
	}
	masked, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"tk_ntfysecret1", "AgotifySecret2", "hookSecret3"} {
		if strings.Contains(string(masked), secret) {
			t.Errorf("check-config shows %q:\n%s", secret, masked)
		}
	}
	for _, line := range []string{
		"type: ntfy # from url: ntfy://***@" + host(ntfySrv) + "/nas1-alerts?scheme=http&priority=high",
		"type: gotify # from url: gotify://" + host(gotifySrv) + "/***?disabletls=yes",
		"type: webhook # from url: generic+http://" + host(hookSrv) + "/hook?src=nas&@Authorization=***",
		"topic: nas1-alerts", "priority: 4", "token: '******'", "Authorization: '******'", "url: http://" + host(hookSrv) + "/hook?src=nas",
	} {
		if !strings.Contains(string(masked), line) {
			t.Errorf("check-config lacks %q:\n%s", line, masked)
		}
	}

	l.Config.Notify.Channels = chs[:4] // the typed ntfy only took the name
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	stop := notifytest.RunNotifiers(t, b, l.Config.Notify, delivery.Options{})
	defer stop()
	notifytest.Publish(t, b, notifytest.Firing("nas1", "url-1"))

	wait := func(what string, got <-chan notifytest.Hit) notifytest.Hit {
		t.Helper()
		select {
		case h := <-got:
			return h
		case <-time.After(20 * time.Second):
			t.Fatalf("the outbox did not deliver to the %s URL channel", what)
		}
		return notifytest.Hit{}
	}
	// ntfy: JSON to the server root with the bearer token (https://docs.ntfy.sh/publish/#publish-as-json, #access-tokens).
	h := wait("ntfy", ntfySrv.Got)
	if j := h.JSON(t); h.Path != "/" || h.Header.Get("Authorization") != "Bearer tk_ntfysecret1" || j["topic"] != "nas1-alerts" || j["priority"] != float64(4) {
		t.Errorf("ntfy got %s %v %v", h.Path, h.Header, j)
	}
	// Gotify: POST /message with X-Gotify-Key (https://gotify.net/api-docs).
	h = wait("gotify", gotifySrv.Got)
	if h.Path != "/message" || h.Header.Get("X-Gotify-Key") != "AgotifySecret2" {
		t.Errorf("gotify got %s %v", h.Path, h.Header)
	}
	// The generic webhook: its path and query, the header from @Authorization.
	h = wait("generic", hookSrv.Got)
	if j := h.JSON(t); h.Path != "/hook" || h.RawQuery != "src=nas" || h.Header.Get("Authorization") != "Bearer hookSecret3" || j["id"] != "url-1" {
		t.Errorf("webhook got %s?%s %v %v", h.Path, h.RawQuery, h.Header, j)
	}
	select {
	case r := <-mail.Got:
		if r.From != "zwatch@nas1.example.net" || !slices.Equal(r.To, []string{"ops@example.net"}) {
			t.Errorf("mail from %q to %v", r.From, r.To)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the outbox did not deliver to the smtp URL channel")
	}
}

// A URL channel's problems name the entry, the URL part and the fix, with
// the URL's secrets masked.
func TestURLChannelErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{`{url: "ntfy://:tk_secret99@ntfy.sh/t?priority=loud"}`, `notify.channels[0].url = "ntfy://***@ntfy.sh/…": query parameter priority: "loud" is not an ntfy priority`},
		{`{url: "tgram://123:tk_secret99@telegram"}`, `notify.channels[0].url = "tgram://…": scheme: "tgram" is not a service zwatch knows`},
		{`{url: "ntfy://ntfy.sh/t", topic: x}`, "notify.channels[0].topic: not used beside url"},
		{`{url: "ntfy://ntfy.sh/t", min_severity: loud}`, "notify.channels[0].min_severity"},
		{`{url: "${ZW_URL_NOT_SET}"}`, "environment variable ZW_URL_NOT_SET is not set"},
		{`{url: [a]}`, "notify.channels[0].url"},
		{`{url: ""}`, "notify.channels[0].url: empty: write the channel as one URL"},
		{`{url: "ntfy.sh/topic"}`, "notify.channels[0].url: scheme: missing"},
		{`{url: "smtp://u:tk_secret99@mail.example.net:465/?from=a@example.net&to=b@example.net&encryption=ExplicitTLS"}`, "query parameter encryption: port 465 speaks TLS"},
		{`{url: "discord://tk_secret99@123", name: console}`, "notify.channels[0].name"},
		{`{name: x}`, "notify.channels[0].type: empty: set one of email"},
		{`{url: "exec:///usr/local/bin/page-me"}`, `notify.channels[0].url = "exec://…": scheme: exec channels have no URL form: write the channel with type: exec and its keys`},
		{`{url: "email://u:tk_secret99@mail.example.net"}`, `notify.channels[0].url = "email://…": scheme: email channels are written smtp://…`},
		{`{url: "webhook://h/x"}`, "scheme: webhook channels are written generic://…"},
		{`{url: "signals://localhost:8080/+4915112345678/+4915187654321"}`, `scheme: "signals" is not a service zwatch knows: did you mean "signal"?`},
	} {
		_, err := parseConfig(t, "notify:\n  channels:\n    - "+tc.yaml+"\n")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n  got  %v\n  want %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "tk_secret99") {
			t.Errorf("%s: error shows the secret: %v", tc.yaml, err)
		}
	}
}
