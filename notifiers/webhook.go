package notifiers

import (
	"context"
	"net/http"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/config"
)

// WebhookPayload is the JSON body of a generic webhook: the rendered text
// for chat-like receivers and the whole notification for programs.
type WebhookPayload struct {
	Version      string             `json:"version"`
	ID           string             `json:"id"`
	Host         string             `json:"host"`
	Status       string             `json:"status"`
	Severity     string             `json:"severity"`
	Test         bool               `json:"test,omitempty"`
	Title        string             `json:"title"`
	Summary      string             `json:"summary"`
	Text         string             `json:"text"`
	Notification alert.Notification `json:"notification"`
}

type webhook struct {
	url     string
	headers http.Header
	secrets []string
	client  *http.Client
}

func newWebhook(cc config.ChannelConfig, hc *http.Client) *webhook {
	h := http.Header{}
	var secrets []string
	for k, v := range cc.Headers {
		h.Set(k, v.Value)
		secrets = append(secrets, v.Value)
	}
	return &webhook{url: cc.URL, headers: h, secrets: secrets, client: hc}
}

func (w *webhook) Send(ctx context.Context, subject, text string) error {
	m := messageFrom(ctx, subject, text)
	status := "firing"
	if m.Resolved {
		status = "resolved"
	}
	p := WebhookPayload{
		Version: "1", ID: m.ID, Host: m.Host, Status: status, Severity: string(m.Severity),
		Test: m.Test, Title: m.Title, Summary: m.Summary, Text: cutBytes(m.Text, webhookTextMax),
		Notification: m.Notification,
	}
	return do(ctx, w.client, request{
		service: "webhook", url: w.url, header: w.headers, contentType: "application/json",
		payload: p, secrets: w.secrets,
	})
}
