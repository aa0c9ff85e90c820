package notifiers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/zwatch/zwatch/config"
)

const slackAPI = "https://slack.com/api"

// slack posts to an incoming webhook, or with a bot token to
// chat.postMessage. notify's slack service supports only the token form and
// no base URL.
type slack struct {
	webhook, api, token, channel string
	client                       *http.Client
}

func newSlack(cc config.ChannelConfig, hc *http.Client) *slack {
	api := strings.TrimRight(cc.APIURL, "/")
	if api == "" {
		api = slackAPI
	}
	return &slack{webhook: cc.WebhookURL.Value, api: api, token: cc.Token.Value, channel: cc.Channel, client: hc}
}

func (s *slack) Send(ctx context.Context, subject, text string) error {
	m := messageFrom(ctx, subject, text)
	msg := cutRunes(m.Text, slackTextMax)
	if s.webhook != "" {
		return do(ctx, s.client, request{
			service: "slack", url: s.webhook, contentType: "application/json",
			payload: map[string]any{"text": msg}, secrets: []string{s.webhook},
		})
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+s.token)
	return do(ctx, s.client, request{
		service: "slack", url: s.api + "/chat.postMessage", header: h,
		contentType: "application/json; charset=utf-8",
		payload:     map[string]any{"channel": s.channel, "text": msg},
		secrets:     []string{s.token},
		check: func(raw []byte) error {
			// The Web API answers 200 with ok:false for bad tokens and channels.
			var r struct {
				OK bool `json:"ok"`
			}
			if err := json.Unmarshal(raw, &r); err != nil || !r.OK {
				return &ServiceError{Service: "slack", Status: http.StatusOK, Detail: detail(raw)}
			}
			return nil
		},
	})
}
