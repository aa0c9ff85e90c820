package notifiers

import (
	"context"
	"net/http"

	"github.com/zwatch/zwatch/config"
)

// discord posts to a channel webhook: notify's discord service needs a bot
// token and a gateway session, which a NAS has no use for.
type discord struct {
	url    string
	client *http.Client
}

func newDiscord(cc config.ChannelConfig, hc *http.Client) *discord {
	return &discord{url: cc.WebhookURL.Value, client: hc}
}

func (d *discord) Send(ctx context.Context, subject, text string) error {
	m := messageFrom(ctx, subject, text)
	payload := map[string]any{
		"content":  cutRunes(m.Text, discordContentMax),
		"username": "zwatch",
		// Alert text must never ping @everyone.
		"allowed_mentions": map[string]any{"parse": []string{}},
	}
	return do(ctx, d.client, request{
		service: "discord", url: d.url, contentType: "application/json",
		payload: payload, secrets: []string{d.url},
	})
}
