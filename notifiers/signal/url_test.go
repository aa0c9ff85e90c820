package signal_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/signal"
)

// The URL form is the newer shoutrrr's
// (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/chat/signal/index.md:
// signal://[user[:password]@]host[:port]/source_phone/recipient…, port 8080
// and https unless given, ?disabletls=yes for http). apprise's @GROUP
// targets (https://github.com/caronc/apprise/wiki/Notify_signal) and the
// logins neither the REST API nor zwatch has are refused.
func TestSignalURL(t *testing.T) {
	g := groupID(7)
	notifytest.CheckURLs(t, signal.Service, []string{"hunter2pass", "tok3nS3cret"}, []notifytest.URLCase{
		{URL: "signal://127.0.0.1:8080/+4915112345678/+4915187654321?disabletls=yes",
			Want:   signal.Config{URL: "http://127.0.0.1:8080", Number: "+4915112345678", Recipients: []string{"+4915187654321"}},
			Masked: "signal://127.0.0.1:8080/+4915112345678/+4915187654321?disabletls=yes"},
		{URL: "signal://signal.example.net/+4915112345678/+4915187654321,+14155550123/" + g + "/",
			Want:   signal.Config{URL: "https://signal.example.net:8080", Number: "+4915112345678", Recipients: []string{"+4915187654321", "+14155550123", g}},
			Masked: "signal://signal.example.net/+4915112345678/+4915187654321,+14155550123/" + g + "/"},
		{URL: "signal:///+4915112345678/" + g + "?DisableTLS=y",
			Want:   signal.Config{URL: "http://localhost:8080", Number: "+4915112345678", Recipients: []string{g}},
			Masked: "signal:///+4915112345678/" + g + "?DisableTLS=y"},
		{URL: "signal://[::1]:9922/+4915112345678/+4915187654321",
			Want:   signal.Config{URL: "https://[::1]:9922", Number: "+4915112345678", Recipients: []string{"+4915187654321"}},
			Masked: "signal://[::1]:9922/+4915112345678/+4915187654321"},

		{URL: "signal://localhost:8080/+4915112345678", Err: "path: needs the sending number and at least one recipient"},
		{URL: "signal://localhost:8080/+4915112345678/,", Err: "path: no recipient after the sending number"},
		{URL: "signal://localhost:8080/015112345678/+4915187654321", Err: "path segment 1: the sending number is a national number"},
		{URL: "signal://localhost:8080/+4915112345678/+4915187654321/0049-151-1111111", Err: "path segment 3: the recipient is not in E.164 form: write the leading 00 as +: +491511111111"},
		{URL: "signal://localhost:8080/+4915112345678/group.abc", Err: "path segment 2: not a Signal group id: copy the id (group.…) from GET /v1/groups/+4915112345678"},
		{URL: "signal://localhost:8080/+4915112345678/@nasgroup", Err: "path segment 2: apprise's @GROUP is not read"},
		{URL: "signal://phil:hunter2pass@localhost:8080/+4915112345678/+4915187654321", Err: "user: zwatch sends no login: the signal-cli REST API has none"},
		{URL: "signal://localhost:8080/+4915112345678/+4915187654321?token=tok3nS3cret", Err: "query parameter token: zwatch sends no login"},
		{URL: "signal://localhost:8080/+4915112345678/+4915187654321?to=+1", Err: "query parameter to: write the sender and the recipients as path segments"},
		{URL: "signal://localhost:8080/+4915112345678/+4915187654321?attachments=x", Err: "query parameter attachments"},
		{URL: "signal://localhost:80800/+4915112345678/+4915187654321", Err: `port: "80800" is not a port`},
		{URL: "signal://localhost/+4915112345678/+4915187654321?disabletls=sometimes", Err: `query parameter disabletls: "sometimes" is not yes or no`},
		{URL: "signal://localhost/+4915112345678/+4915187654321?text_mode=styled", Err: "query parameter text_mode: not read by signal URLs (they take disabletls)"},
	})
}
