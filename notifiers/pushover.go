package notifiers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/zwatch/zwatch/config"
)

const pushoverAPI = "https://api.pushover.net/1/messages.json"

// pushover posts to the Pushover message API directly: notify's pushover
// service neither sets a priority nor accepts a context or base URL.
type pushover struct {
	api, token, user string
	client           *http.Client
}

func newPushover(cc config.ChannelConfig, hc *http.Client) *pushover {
	api := cc.APIURL
	if api == "" {
		api = pushoverAPI
	}
	return &pushover{api: api, token: cc.Token.Value, user: cc.User.Value, client: hc}
}

func (p *pushover) Send(ctx context.Context, subject, text string) error {
	m := messageFrom(ctx, subject, text)
	form := url.Values{
		"token":    {p.token},
		"user":     {p.user},
		"title":    {cutRunes(m.Title, pushoverTitleMax)},
		"message":  {cutRunes(m.Text, pushoverMessageMax)},
		"priority": {strconv.Itoa(pushoverPriority(m))},
	}
	if !m.Created.IsZero() {
		form.Set("timestamp", strconv.FormatInt(m.Created.Unix(), 10))
	}
	return do(ctx, p.client, request{
		service: "pushover", url: p.api, contentType: "application/x-www-form-urlencoded",
		payload: form, secrets: []string{p.token, p.user},
		check: func(raw []byte) error {
			var r struct {
				Status int `json:"status"`
			}
			if json.Unmarshal(raw, &r) == nil && r.Status != 1 {
				return &ServiceError{Service: "pushover", Status: http.StatusOK, Detail: detail(raw)}
			}
			return nil
		},
	})
}
