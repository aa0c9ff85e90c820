package discord_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/discord"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// The URL form is shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/discord/
// (https://discord.com/api/webhooks/webhookid/token written as discord://token@webhookid).
func TestDiscordURL(t *testing.T) {
	const id, tok = "4174216298", "JHMHI8qBe7bk2ZwO5U711o3dV_js-Xy"
	notifytest.CheckURLs(t, discord.Service, []string{tok}, []notifytest.URLCase{
		{URL: "discord://" + tok + "@" + id, Want: discord.Config{WebhookURL: notifytest.Lit("https://discord.com/api/webhooks/" + id + "/" + tok)},
			Masked: "discord://***@" + id},
		{URL: "discord://" + tok + "@" + id + "/", Want: discord.Config{WebhookURL: notifytest.Lit("https://discord.com/api/webhooks/" + id + "/" + tok)},
			Masked: "discord://***@" + id + "/"},

		{URL: "discord://" + id + "/" + tok, Err: "user: no webhook token: from https://discord.com/api/webhooks/WEBHOOK_ID/TOKEN write discord://TOKEN@WEBHOOK_ID"},
		{URL: "discord://" + tok + ":x@" + id, Err: "password: a Discord URL has none"},
		{URL: "discord://" + tok + "@", Err: "host: empty: the webhook id is the host"},
		{URL: "discord://" + tok + "@discord.com", Err: "host: not a webhook id"},
		{URL: "discord://" + tok + "@" + id + ":443", Err: "port: a Discord URL has none"},
		{URL: "discord://" + tok + "@" + id + "/raw", Err: "path: /raw posts the message as JSON"},
		{URL: "discord://" + tok + "@" + id + "/x/y", Err: "path: a Discord URL has none"},
		{URL: "discord://" + tok + "@" + id + "?username=NAS", Err: "query parameter username: zwatch posts as zwatch"},
		{URL: "discord://" + tok + "@" + id + "?colorError=0xff0000", Err: "query parameter colorError: zwatch formats each message itself"},
		{URL: "discord://" + tok + "@" + id + "?thread_id=1", Err: "query parameter thread_id"},
	})
}
