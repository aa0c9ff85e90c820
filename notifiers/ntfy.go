package notifiers

import (
	"context"
	"net/http"
	"strings"

	"github.com/zwatch/zwatch/config"
)

const ntfyDefaultURL = "https://ntfy.sh"

// ntfy publishes as JSON to the server root: unlike the header form, JSON
// carries a non-ASCII title (the em dash of a summary) without encoding tricks.
type ntfy struct {
	url, topic, token string
	client            *http.Client
}

func newNtfy(cc config.ChannelConfig, hc *http.Client) *ntfy {
	u := strings.TrimRight(cc.URL, "/")
	if u == "" {
		u = ntfyDefaultURL
	}
	return &ntfy{url: u, topic: cc.Topic, token: cc.Token.Value, client: hc}
}

func (n *ntfy) Send(ctx context.Context, subject, text string) error {
	m := messageFrom(ctx, subject, text)
	h := http.Header{}
	if n.token != "" {
		h.Set("Authorization", "Bearer "+n.token)
	}
	payload := map[string]any{
		"topic":    n.topic,
		"title":    m.Title,
		"message":  cutBytes(m.Text, ntfyMessageMax),
		"priority": ntfyPriority(m),
		"tags":     ntfyTags(m),
	}
	return do(ctx, n.client, request{
		service: "ntfy", url: n.url + "/", header: h, contentType: "application/json",
		payload: payload, secrets: []string{n.token},
	})
}
