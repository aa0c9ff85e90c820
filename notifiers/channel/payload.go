package channel

import "github.com/zwatch/zwatch/model/alert"

// Payload is the notification as programs receive it: the body the webhook
// channel posts and the exec channel writes to its program's stdin. Its
// fields are a stable interface; Version changes if they ever must.
type Payload struct {
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

// PayloadTextMax bounds Payload.Text in bytes; the notification is whole.
const PayloadTextMax = 1 << 20

// NewPayload is m for programs.
func NewPayload(m Message) Payload {
	return Payload{
		Version: "1", ID: m.ID, Host: m.Host, Status: m.Status(), Severity: string(m.Severity),
		Test: m.Test, Title: m.Title, Summary: m.Summary, Text: CutBytes(m.Text, PayloadTextMax),
		Notification: m.Notification,
	}
}
