package channel

import (
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Message is one notification rendered for people (notifiers.Render).
// Every channel derives its payload from it, cutting to the service's limits.
type Message struct {
	// Title is a short heading for services with a title field (Pushover,
	// ntfy, Gotify): "zwatch nas1: CRITICAL".
	Title string
	// Summary is the lock-screen line and the email subject, e.g.
	// "[CRITICAL] vault DEGRADED — disk WD-… FAULTED, raidz2-0 can lose 1 more disk".
	Summary string
	// Text is the plain-text body; its first line is Summary.
	Text string
	// HTML is the same content for email.
	HTML string

	ID       string
	Host     string
	Severity alert.Severity
	Resolved bool
	Test     bool
	Created  time.Time
	// Notification is what was rendered, for receivers that want it whole.
	Notification alert.Notification
	// Links answer the page on the status page (acknowledge, snooze), also
	// in Text and HTML; a channel with buttons may show them as buttons.
	Links []Link
	// Replace names the disk a page offers to replace from the phone
	// (actions.replace, and the disk is this machine's and may be); ""
	// when the page offers none.
	Replace string
	// PageURL is the incident on the status page (http.public_url), for an
	// "Open guide" button; "" without a public URL.
	PageURL string
}

// Incident is the incident the message is about (its first alert that
// names one), "" when none does: what an answer to it answers.
func (m Message) Incident() string {
	for _, a := range m.Notification.Alerts {
		if a.Incident != "" {
			return a.Incident
		}
	}
	return ""
}

// Link is a labelled link of a message: "Acknowledge" and its signed URL.
type Link struct{ Label, URL string }

// Silent reports whether a phone should stay quiet for m: resolved notices
// and information wake nobody.
func (m Message) Silent() bool { return m.Resolved || m.Severity == alert.Info }

// Status is "resolved" when every alert in m has ended, else "firing".
func (m Message) Status() string {
	if m.Resolved {
		return "resolved"
	}
	return "firing"
}
