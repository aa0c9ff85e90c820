package mattermost_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/mattermost"
)

// The URL form is shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/mattermost/
// (mattermost://[username@]host[:port]/token[/channel][?icon=…], the webhook
// https://host/hooks/token), with the newer shoutrrr's disabletls
// (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/chat/mattermost/index.md).
func TestMattermostURL(t *testing.T) {
	const key = "bywsw8zt5jgpte3nm65qjiru6h"
	lit := notifytest.Lit
	notifytest.CheckURLs(t, mattermost.Service, []string{key, "hunter2pass"}, []notifytest.URLCase{
		{URL: "mattermost://chat.example.net/" + key, Want: mattermost.Config{WebhookURL: lit("https://chat.example.net/hooks/" + key)},
			Masked: "mattermost://chat.example.net/***"},
		{URL: "mattermost://zwatch@chat.example.net:8065/" + key + "/nas-alerts?icon=https://zwatch.example/icon.png",
			Want: mattermost.Config{WebhookURL: lit("https://chat.example.net:8065/hooks/" + key), Channel: "nas-alerts", Username: "zwatch",
				IconURL: "https://zwatch.example/icon.png"},
			Masked: "mattermost://***@chat.example.net:8065/***/nas-alerts?icon=https://zwatch.example/icon.png"},
		{URL: "mattermost://192.168.1.5:8065/" + key + "/@phil/?disabletls=yes&icon_url=http://192.168.1.5/i.png",
			Want:   mattermost.Config{WebhookURL: lit("http://192.168.1.5:8065/hooks/" + key), Channel: "@phil", IconURL: "http://192.168.1.5/i.png"},
			Masked: "mattermost://192.168.1.5:8065/***/@phil/?disabletls=yes&icon_url=http://192.168.1.5/i.png"},

		{URL: "mattermost://chat.example.net/", Err: "path: no webhook key: from https://chat.example.net/hooks/KEY write mattermost://chat.example.net/KEY"},
		{URL: "mattermost://chat.example.net/hooks/" + key, Err: "path segment 1: is hooks: leave it out"},
		{URL: "mattermost://chat.example.net/" + key + "-x", Err: "path segment 1: not a webhook key"},
		{URL: "mattermost://chat.example.net/" + key + "/a/b", Err: "path segment 3: a Mattermost URL has at most two path segments"},
		{URL: "mattermost:///" + key, Err: "host: empty: write the Mattermost server"},
		{URL: "mattermost://zwatch:hunter2pass@chat.example.net/" + key, Err: "password: a Mattermost URL has none"},
		{URL: "mattermost://@chat.example.net/" + key, Err: "user: empty: write the poster's name before @"},
		{URL: "mattermost://chat.example.net:0/" + key, Err: `port: "0" is not a port`},
		{URL: "mattermost://chat.example.net/" + key + "?icon=smiley", Err: `query parameter icon: "smiley" is an emoji: zwatch sets the poster's picture by URL only`},
		{URL: "mattermost://chat.example.net/" + key + "?disabletls=2", Err: `query parameter disabletls: "2" is not yes or no`},
		{URL: "mattermost://chat.example.net/" + key + "?title=x", Err: "query parameter title: zwatch titles each message with its alert"},
		{URL: "mattermost://chat.example.net/" + key + "?channel=x", Err: "query parameter channel: not read by mattermost URLs (they take disabletls, icon, icon_emoji, icon_url)"},
	})
}
