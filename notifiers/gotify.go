package notifiers

import (
	"context"
	"net/http"
	"strings"

	"github.com/zwatch/zwatch/config"
)

// gotify posts to a Gotify server's /message with an application token.
type gotify struct {
	url, token string
	client     *http.Client
}

func newGotify(cc config.ChannelConfig, hc *http.Client) *gotify {
	return &gotify{url: strings.TrimRight(cc.URL, "/"), token: cc.Token.Value, client: hc}
}

func (g *gotify) Send(ctx context.Context, subject, text string) error {
	m := messageFrom(ctx, subject, text)
	h := http.Header{}
	// The header keeps the token out of URLs in proxy logs.
	h.Set("X-Gotify-Key", g.token)
	payload := map[string]any{
		"title":    m.Title,
		"message":  cutBytes(m.Text, gotifyMessageMax),
		"priority": gotifyPriority(m),
		"extras": map[string]any{
			"client::display": map[string]string{"contentType": "text/plain"},
		},
	}
	return do(ctx, g.client, request{
		service: "gotify", url: g.url + "/message", header: h, contentType: "application/json",
		payload: payload, secrets: []string{g.token},
	})
}
