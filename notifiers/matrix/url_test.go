package matrix_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/matrix"
)

// The URL form is shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/matrix/
// (matrix://user:password@host:port/?rooms=!roomID1,roomAlias2&disableTLS=yes;
// an empty user makes the password the access token; a room without ! or #
// is an alias whose # was left out).
func TestMatrixURL(t *testing.T) {
	const tok = "syt_Ym90_QWxhcm1zRm9yTkFT_0x2Rm3"
	lit := notifytest.Lit
	notifytest.CheckURLs(t, matrix.Service, []string{tok, "hunter2pass"}, []notifytest.URLCase{
		{URL: "matrix://:" + tok + "@matrix.example.org/?rooms=!AbCdEf:example.org",
			Want:   matrix.Config{Homeserver: "https://matrix.example.org", AccessToken: lit(tok), Room: "!AbCdEf:example.org"},
			Masked: "matrix://***@matrix.example.org/?rooms=!AbCdEf:example.org"},
		{URL: "matrix://:" + tok + "@matrix.example.org:8448?room=%23nas-alerts:example.org",
			Want:   matrix.Config{Homeserver: "https://matrix.example.org:8448", AccessToken: lit(tok), Room: "#nas-alerts:example.org"},
			Masked: "matrix://***@matrix.example.org:8448?room=%23nas-alerts:example.org"},
		{URL: "MATRIX://:" + tok + "@192.168.1.5:8008/?Rooms=nas-alerts:example.org&disableTLS=yes",
			Want:   matrix.Config{Homeserver: "http://192.168.1.5:8008", AccessToken: lit(tok), Room: "#nas-alerts:example.org"},
			Masked: "matrix://***@192.168.1.5:8008/?Rooms=nas-alerts:example.org&disableTLS=yes"},

		{URL: "matrix://matrix.example.org/?rooms=!a:b", Err: "user: no access token: write the bot's access token after an empty user, matrix://:ACCESS_TOKEN@host"},
		{URL: "matrix://bot:hunter2pass@matrix.example.org/?rooms=!a:b", Err: "user: zwatch does not log in with a user and password (m.login.password)"},
		{URL: "matrix://" + tok + "@matrix.example.org/?rooms=!a:b", Err: "password: empty: the access token goes after a colon"},
		{URL: "matrix://:" + tok + "@/?rooms=!a:b", Err: "host: empty: write the homeserver"},
		{URL: "matrix://:" + tok + "@m.example.org:99999/?rooms=!a:b", Err: `port: "99999" is not a port`},
		{URL: "matrix://:" + tok + "@m.example.org/_matrix/client?rooms=!a:b", Err: "path: a Matrix URL has none: the room goes in ?rooms="},
		{URL: "matrix://:" + tok + "@m.example.org/", Err: "query parameter rooms: no room: zwatch posts into one room, not into every joined room"},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=!a:b,!c:d", Err: "query parameter rooms: names 2 rooms: a channel posts into one, so write one matrix:// URL per room"},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=@phil:example.org", Err: `query parameter rooms: "@phil:example.org" is a user, not a room`},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=nas-alerts", Err: `query parameter rooms: "nas-alerts" is no room ID (!…) and an alias without its server`},
		// Room version 12's IDs have no server part.
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=!31hneApxJ_1o-63DmFrpeqnkFfWppnzWso1JvH3ogLM",
			Want:   matrix.Config{Homeserver: "https://m.example.org", AccessToken: lit(tok), Room: "!31hneApxJ_1o-63DmFrpeqnkFfWppnzWso1JvH3ogLM"},
			Masked: "matrix://***@m.example.org/?rooms=!31hneApxJ_1o-63DmFrpeqnkFfWppnzWso1JvH3ogLM"},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=!a:b&disabletls=maybe", Err: `query parameter disabletls: "maybe" is not yes or no`},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=!a:b&title=NAS", Err: "query parameter title: zwatch titles each message with its alert"},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=!a:b&deviceid=x", Err: "query parameter deviceid: only for a password login"},
		{URL: "matrix://:" + tok + "@m.example.org/?romos=!a:b", Err: `query parameter romos: not read by matrix URLs: did you mean "rooms"?`},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=!a:b&rooms=!c:d", Err: "query parameter rooms: given twice"},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=!a:b&Room=!c:d", Err: "query parameter Room: given twice, also as rooms: keep one"},
		{URL: "matrix://:" + tok + "@m.example.org/?rooms=#nas:example.org", Err: "fragment: a # ends the URL"},
	})
}
