package gotify_test

import (
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/gotify"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// The URL form is shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/gotify/
// (gotify://host[:port]/[path/]token, ?priority=, ?disabletls=yes).
func TestGotifyURL(t *testing.T) {
	const tok = "AzyoeNS.D4iJLVa"
	notifytest.CheckURLs(t, gotify.Service, []string{tok}, []notifytest.URLCase{
		{URL: "gotify://gotify.example.com:443/" + tok + "/?priority=1", Want: gotify.Config{URL: "https://gotify.example.com:443", Token: notifytest.Lit(tok), Priority: notifytest.Int(1)},
			Masked: "gotify://gotify.example.com:443/***/?priority=1"},
		{URL: "gotify://example.com/path/to/gotify/" + tok, Want: gotify.Config{URL: "https://example.com/path/to/gotify", Token: notifytest.Lit(tok)},
			Masked: "gotify://example.com/path/to/gotify/***"},
		{URL: "gotify://192.168.1.5:8080/" + tok + "?disabletls=yes&priority=10", Want: gotify.Config{URL: "http://192.168.1.5:8080", Token: notifytest.Lit(tok), Priority: notifytest.Int(10)},
			Masked: "gotify://192.168.1.5:8080/***?disabletls=yes&priority=10"},
		{URL: "gotify://g.example/" + tok + "?DisableTLS=No", Want: gotify.Config{URL: "https://g.example", Token: notifytest.Lit(tok)}, Masked: "gotify://g.example/***?DisableTLS=No"},

		{URL: "gotify://g.example/", Err: "path: no application token: it is the last path segment"},
		{URL: "gotify:///" + tok, Err: "host: empty"},
		{URL: "gotify://g.example/CXyz123.abcdefg", Err: "path segment 1: a client token"},
		{URL: "gotify://g.example/sub/A%24bc", Err: "path segment 2: not a Gotify token"},
		{URL: "gotify://u:" + tok + "@g.example/x", Err: "user: a Gotify URL has none"},
		{URL: "gotify://g.example/" + tok + "?priority=11", Err: `query parameter priority: "11" is not a Gotify priority: use 0-10`},
		{URL: "gotify://g.example/" + tok + "?disabletls=maybe", Err: `query parameter disabletls: "maybe" is not yes or no`},
		{URL: "gotify://g.example/" + tok + "?title=x", Err: "query parameter title: zwatch titles each message with its alert"},
		{URL: "gotify://g.example:http/" + tok, Err: "port: not a number"},
	})
}

// A fixed priority replaces the severity's in the body Gotify documents
// (https://gotify.net/api-docs#/message/createMessage: "priority"); a
// resolved notice stays quiet.
func TestGotifyFixedPriority(t *testing.T) {
	s := notifytest.StartHTTP(t, `{"id":1}`)
	cc := config.ChannelConfig{Name: "gotify", Type: "gotify", Settings: gotify.Config{URL: s.URL, Token: config.Secret{Value: "AbCdEf.123"}, Priority: notifytest.Int(9)}}
	n := notifytest.Firing("nas1", "g-1")
	if err := notifytest.Send(t, cc, n); err != nil {
		t.Fatal(err)
	}
	if err := notifytest.Send(t, cc, notifytest.Resolved(n, "g-2")); err != nil {
		t.Fatal(err)
	}
	hits := s.All()
	if len(hits) != 2 || hits[0].JSON(t)["priority"] != float64(9) || hits[1].JSON(t)["priority"] != float64(2) {
		t.Errorf("priorities: %d requests %v", len(hits), hits)
	}
	var errs config.Errors
	gotify.Config{URL: "https://g", Token: config.Secret{Value: "A"}, Priority: notifytest.Int(-1)}.Validate("x", &errs)
	if len(errs) != 1 || errs[0].Path != "x.priority" {
		t.Errorf("priority -1: %v", errs)
	}
}
