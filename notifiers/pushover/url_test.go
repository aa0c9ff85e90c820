package pushover_test

import (
	"net/url"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/pushover"
)

// The URL form is shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/pushover/
// (pushover://shoutrrr:apiToken@userKey/?devices=&priority=).
func TestPushoverURL(t *testing.T) {
	const token, user = "azGDORePK8gMaC0QOYAMyEEuzJnyUi", "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"
	notifytest.CheckURLs(t, pushover.Service, []string{token, user}, []notifytest.URLCase{
		{URL: "pushover://shoutrrr:" + token + "@" + user + "/", Want: pushover.Config{Token: notifytest.Lit(token), User: notifytest.Lit(user)},
			Masked: "pushover://***@***/"},
		{URL: "pushover://x:" + token + "@" + user + "?devices=iphone,droid-2&priority=-1",
			Want:   pushover.Config{Token: notifytest.Lit(token), User: notifytest.Lit(user), Devices: []string{"iphone", "droid-2"}, Priority: notifytest.Int(-1)},
			Masked: "pushover://***@***?devices=iphone,droid-2&priority=-1"},
		{URL: "pushover://:" + token + "@" + user + "/?priority=1", Want: pushover.Config{Token: notifytest.Lit(token), User: notifytest.Lit(user), Priority: notifytest.Int(1)},
			Masked: "pushover://***@***/?priority=1"},

		{URL: "pushover://" + user + "/", Err: "password: empty: the application's API token goes after the colon"},
		{URL: "pushover://shoutrrr@" + user + "/", Err: "password: empty"},
		{URL: "pushover://shoutrrr:" + token + "@/", Err: "host: empty: the user (or group) key is the host"},
		{URL: "pushover://shoutrrr:" + token + "@" + user + ":443/", Err: "port: a Pushover URL has none"},
		{URL: "pushover://shoutrrr:" + token + "@" + user + "/phone", Err: "path: a Pushover URL has none: name devices in the query"},
		{URL: "pushover://shoutrrr:" + token + "@" + user + "/?priority=2", Err: "query parameter priority: emergency (2) needs retry and expire"},
		{URL: "pushover://shoutrrr:" + token + "@" + user + "/?priority=high", Err: `query parameter priority: "high" is not a Pushover priority`},
		{URL: "pushover://shoutrrr:" + token + "@" + user + "/?devices=my+phone", Err: `query parameter devices: "my phone" is not a device name`},
		{URL: "pushover://shoutrrr:" + token + "@" + user + "/?title=NAS", Err: `notify.channels[0].url = "pushover://***@***/…": query parameter title`},
		{URL: "pushover://shoutrrr:" + token + "@" + user + "/?device=phone", Err: `query parameter device: not read by pushover URLs: did you mean "devices"?`},
	})
}

// Devices and a fixed priority go where https://pushover.net/api documents
// them: "device" (several comma-separated) and "priority" in the form.
func TestPushoverDevicesAndFixedPriority(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"status":1,"request":"abc"}`)
	cc := channelTo(s.URL+"/1/messages.json", "azGDORePK8gMaC0QOYAMyEEuzJnyUi", "uQiRzpo4DXghDmr9QzzfQu27cmVRsG")
	c := cc.Settings.(pushover.Config)
	c.Devices, c.Priority = []string{"iphone", "droid2"}, notifytest.Int(0)
	cc.Settings = c
	n := notifytest.Firing("nas1", "p-1")
	if err := notifytest.Send(t, cc, n); err != nil {
		t.Fatal(err)
	}
	if err := notifytest.Send(t, cc, notifytest.Resolved(n, "p-2")); err != nil {
		t.Fatal(err)
	}
	hits := s.All()
	if len(hits) != 2 {
		t.Fatalf("%d requests", len(hits))
	}
	for i, want := range []string{"0", "-1"} {
		f, err := url.ParseQuery(string(hits[i].Body))
		if err != nil {
			t.Fatal(err)
		}
		if f.Get("device") != "iphone,droid2" || f.Get("priority") != want {
			t.Errorf("request %d: device %q priority %q, want %s", i, f.Get("device"), f.Get("priority"), want)
		}
	}
	for _, bad := range []pushover.Config{{Priority: notifytest.Int(2)}, {Priority: notifytest.Int(-3)}, {Devices: []string{"a phone"}}} {
		bad.Token, bad.User = config.Secret{Value: "t"}, config.Secret{Value: "u"}
		var errs config.Errors
		bad.Validate("x", &errs)
		if len(errs) != 1 {
			t.Errorf("%+v: %v", bad, errs)
		}
	}
}
