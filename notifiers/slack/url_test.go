package slack_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/slack"
)

// The URL forms are shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/slack/
// (slack://hook:T-B-X@webhook, slack://xoxb:token@channel and the older
// slack://T/B/X).
func TestSlackURL(t *testing.T) {
	const x = "XXXXXXXXXXXXXXXXXXXXXXXX"
	hook := notifytest.Lit("https://hooks.slack.com/services/T00000000/B00000000/" + x)
	const bot = "123456789012-1234567890123-4pt99qFn9Y9YRvAbH5gfN8Xs"
	notifytest.CheckURLs(t, slack.Service, []string{x, "4pt99qFn9Y9YRvAbH5gfN8Xs"}, []notifytest.URLCase{
		{URL: "slack://hook:T00000000-B00000000-" + x + "@webhook", Want: slack.Config{WebhookURL: hook}, Masked: "slack://***@webhook"},
		{URL: "slack://T00000000/B00000000/" + x, Want: slack.Config{WebhookURL: hook}, Masked: "slack://***/***/***"},
		{URL: "slack://hook:T00000000/B00000000/" + x + "@webhook", Err: "port: not a number"},
		{URL: "slack://xoxb:" + bot + "@C001CH4NN3L", Want: slack.Config{Token: notifytest.Lit("xoxb-" + bot), Channel: "C001CH4NN3L"}, Masked: "slack://***@C001CH4NN3L"},
		{URL: "slack://xoxb:" + bot + "@C001CH4NN3L/?x=1", Err: `query parameter x: not read by slack URLs (they take no query parameters)`},

		{URL: "slack://webhook", Err: "user: no token"},
		{URL: "slack://hook:T0-B0-X@webhook", Err: "password: not a Slack token"},
		{URL: "slack://hook:T00000000-B00000000," + x + "@webhook", Err: "password: the token's three parts are split by different characters"},
		{URL: "slack://hook:T00000000-B00000000-" + x + "@general", Err: "host: a webhook posts to its own channel: write @webhook"},
		{URL: "slack://xoxb:" + bot + "@", Err: "host: no channel"},
		{URL: "slack://xoxb:" + bot + "@C001CH4NN3L:80", Err: "port: a Slack URL has none"},
		{URL: "slack://T00000000/B00000000/short", Err: "path: not a webhook's T…/B…/X… parts"},
		{URL: "slack://bot@T00000000/B00000000/" + x, Err: "user: zwatch posts under the webhook's own name"},
		{URL: "slack://hook:T00000000-B00000000-" + x + "@webhook?color=good", Err: "query parameter color: zwatch formats each message itself"},
		{URL: "slack://hook:T00000000-B00000000-" + x + "@webhook?botname=NAS", Err: "query parameter botname"},
		{URL: "slack://xoxb:" + bot + "@C001CH4NN3L?thread_ts=1.2", Err: "query parameter thread_ts: zwatch posts to the channel, not into a thread"},
	})
}
