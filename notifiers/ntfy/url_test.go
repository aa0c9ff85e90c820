package ntfy_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/ntfy"
)

// The URL forms are shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/ntfy/
// (ntfy://[user:password@]host/topic, ntfy://:token@host/topic, ?priority=,
// ?scheme=http).
func TestNtfyURL(t *testing.T) {
	secrets := []string{"tk_s3cr3tT0ken", "hunter2pass"}
	notifytest.CheckURLs(t, ntfy.Service, secrets, []notifytest.URLCase{
		{URL: "ntfy://ntfy.sh/mytopic?priority=high", Want: ntfy.Config{URL: "https://ntfy.sh", Topic: "mytopic", Priority: notifytest.Int(4)},
			Masked: "ntfy://ntfy.sh/mytopic?priority=high"},
		{URL: "ntfy:///mytopic", Want: ntfy.Config{URL: "https://ntfy.sh", Topic: "mytopic"}, Masked: "ntfy:///mytopic"},
		{URL: "NTFY://:tk_s3cr3tT0ken@ntfy.example.net:8443/sub/path/nas-alerts/?Priority=5",
			Want:   ntfy.Config{URL: "https://ntfy.example.net:8443/sub/path", Topic: "nas-alerts", Token: notifytest.Lit("tk_s3cr3tT0ken"), Priority: notifytest.Int(5)},
			Masked: "ntfy://***@ntfy.example.net:8443/sub/path/nas-alerts/?Priority=5"},
		{URL: "ntfy://phil:hunter2pass@192.168.1.5:8080/alerts?scheme=http&priority=min",
			Want:   ntfy.Config{URL: "http://192.168.1.5:8080", Topic: "alerts", Username: "phil", Password: notifytest.Lit("hunter2pass"), Priority: notifytest.Int(1)},
			Masked: "ntfy://***@192.168.1.5:8080/alerts?scheme=http&priority=min"},
		{URL: "ntfy://[::1]:80/t?priority=urgent", Want: ntfy.Config{URL: "https://[::1]:80", Topic: "t", Priority: notifytest.Int(5)}, Masked: "ntfy://[::1]:80/t?priority=urgent"},
		{URL: "ntfy://ntfy.sh/t?priority=3", Want: ntfy.Config{URL: "https://ntfy.sh", Topic: "t", Priority: notifytest.Int(3)}, Masked: "ntfy://ntfy.sh/t?priority=3"},

		{URL: "ntfy://ntfy.sh/", Err: "path: no topic"},
		{URL: "ntfy://ntfy.sh/a%20b", Err: "path segment 1: the topic holds"},
		{URL: "ntfy://ntfy.sh/t?priority=loud", Err: `query parameter priority: "loud" is not an ntfy priority: use min, low, default, high, max (urgent) or 1-5`},
		{URL: "ntfy://ntfy.sh/t?priority=6", Err: "query parameter priority"},
		{URL: "ntfy://ntfy.sh/t?scheme=ftp", Err: `query parameter scheme: "ftp" is not http or https`},
		{URL: "ntfy://phil@ntfy.sh/t", Err: "password: empty: write user:password@, or :TOKEN@"},
		{URL: "ntfy://tk_s3cr3tT0ken@ntfy.sh/t", Err: "user: an access token goes after a colon"},
		{URL: "ntfy://ntfy.sh:0/t", Err: `port: "0" is not a port`},
		{URL: "ntfy://ntfy.sh/t?title=Disk", Err: "query parameter title: zwatch titles each message with its alert"},
		{URL: "ntfy://ntfy.sh/t?tags=x", Err: "query parameter tags"},
		{URL: "ntfy://ntfy.sh/t?click=https://x", Err: "query parameter click: zwatch does not send it: remove it"},
		{URL: "ntfy://ntfy.sh/t?priorty=high", Err: `query parameter priorty: not read by ntfy URLs: did you mean "priority"? (they take priority, scheme)`},
		{URL: "ntfy://ntfy.sh/t?priority=high&priority=low", Err: "query parameter priority: given twice"},
		{URL: "ntfy://:tk_s3cr3tT0ken@ntfy.sh/t?priority=loud", Err: `notify.channels[0].url = "ntfy://***@ntfy.sh/…": query parameter priority`},
		{URL: "ntfy://phil:hunter2/pass@ntfy.sh/t", Err: "port: not a number after the host's colon"},
		{URL: "ntfy://ntfy.sh/t#frag", Err: "fragment: a # ends the URL"},
		{URL: "ntfy://ntfy.sh/t?a=%zz", Err: "query: a parameter is not key=value"},
	})
}

// Basic auth and a fixed priority as https://docs.ntfy.sh/publish/
// documents them: Authorization: Basic base64(user:password) (#username-password),
// "priority" 1-5 in the JSON body (#message-priority, #publish-as-json).
func TestNtfyBasicAuthAndFixedPriority(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"id":"x"}`)
	four := 4
	cc := config.ChannelConfig{Name: "ntfy", Type: "ntfy", Settings: ntfy.Config{URL: s.URL, Topic: "alerts", Username: "phil",
		Password: config.Secret{Value: "hunter2pass"}, Priority: &four}}
	n := notifytest.Firing("nas1", "n-1")
	if err := notifytest.Send(t, cc, n); err != nil {
		t.Fatal(err)
	}
	if err := notifytest.Send(t, cc, notifytest.Resolved(n, "n-2")); err != nil {
		t.Fatal(err)
	}
	hits := s.All()
	if len(hits) != 2 {
		t.Fatalf("%d requests", len(hits))
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("phil:hunter2pass"))
	if got := hits[0].Header.Get("Authorization"); got != want {
		t.Errorf("Authorization %q, want %q", got, want)
	}
	// A critical alert at the fixed 4 instead of 5; the resolved notice stays at 2.
	if p := hits[0].JSON(t)["priority"]; p != float64(4) {
		t.Errorf("firing priority %v", p)
	}
	if p := hits[1].JSON(t)["priority"]; p != float64(2) {
		t.Errorf("resolved priority %v", p)
	}
}

func TestNtfyAuthValidation(t *testing.T) {
	for _, tc := range []struct {
		c    ntfy.Config
		want string
	}{
		{ntfy.Config{Topic: "t", Username: "phil"}, "x.username: username and password go together"},
		{ntfy.Config{Topic: "t", Username: "phil", Password: config.Secret{Value: "p"}, Token: config.Secret{Value: "tk"}}, "x.token: use either token, or username and password"},
		{ntfy.Config{Topic: "t", Priority: notifytest.Int(0)}, `x.priority = "0": must be 1 (min) to 5 (max)`},
	} {
		var errs config.Errors
		tc.c.Validate("x", &errs)
		if len(errs) != 1 || !strings.Contains(errs.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, errs, tc.want)
		}
	}
}
