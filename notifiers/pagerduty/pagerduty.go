// Package pagerduty is the PagerDuty channel: alert events through the
// Events API v2 (POST /v2/enqueue with a service integration's routing key).
// notify's pagerduty service creates incidents through the REST API with a
// user's token instead, and can neither deduplicate nor resolve them.
//
// Each zwatch alert is one PagerDuty alert. Its dedup_key comes from the
// notification's group and the alert's fingerprint, so the resolved notice
// resolves exactly the alert its page opened. A key per group would not
// do: a notice is sent only for the alerts that have news, so the group of
// pool vault may send "[RESOLVED] capacity" while its disk fault still
// fires, and a group key would resolve the disk fault's incident with it.
// payload.group carries the group, for PagerDuty's content-based alert
// grouping to fold one pool's alerts into one incident.
package pagerduty

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the pagerduty channel type.
var Service = channel.Define[Config]("pagerduty")

// DefaultURL is the Events API v2 endpoint unless url says otherwise; an
// account in PagerDuty's EU service region uses EUURL.
const (
	DefaultURL = "https://events.pagerduty.com/v2/enqueue"
	EUURL      = "https://events.eu.pagerduty.com/v2/enqueue"
)

// The Events API's limits: summary and dedup_key in characters, the whole
// event 512 KB. The text in custom_details is bounded well below that.
const (
	summaryMax  = 1024
	dedupKeyMax = 255
	keyLen      = 32
	textMax     = 64 << 10
)

// testResolveAfter is how long a test page stays open before zwatch
// resolves it: long enough for PagerDuty to notify the person, and to have
// opened the alert before the resolve arrives (events are processed
// asynchronously).
const testResolveAfter = 5 * time.Second

// Config is a pagerduty channel's own keys.
type Config struct {
	// RoutingKey is the Integration Key of an Events API v2 integration.
	RoutingKey config.Secret `yaml:"routing_key"`
	// URL overrides the Events API endpoint: EUURL, a proxy.
	URL string `yaml:"url"`
	// ClientURL is zwatch's status page as the person reaches it; when set,
	// PagerDuty links to it from the alert (client, client_url).
	ClientURL string `yaml:"client_url"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p. The routing key
// itself never appears in an error.
func (c Config) Validate(p string, errs *config.Errors) {
	switch k := c.RoutingKey.Value; {
	case !c.RoutingKey.IsSet():
		errs.Add(p+".routing_key", nil, "empty: set the Integration Key of an Events API v2 integration (PagerDuty → Services → your service → Integrations)")
	case len(k) != keyLen || strings.IndexFunc(k, notAlnum) >= 0:
		errs.Add(p+".routing_key", nil, "has %d characters, not the 32 letters and digits of a PagerDuty routing key: copy the Integration Key of an Events API v2 integration (a REST API key does not work)", len(k))
	}
	channel.OptionalURL(errs, p+".url", c.URL)
	channel.OptionalURL(errs, p+".client_url", c.ClientURL)
}

func notAlnum(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
}

// HasLiteralSecret reports a routing key written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.RoutingKey.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender sends one event per alert of a notification.
type Sender struct {
	url, key, clientURL string
	customURL           bool
	client              *http.Client
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	return &Sender{url: strutil.FirstNonEmpty(c.URL, DefaultURL), key: c.RoutingKey.Value, clientURL: c.ClientURL,
		customURL: c.URL != "", client: env.HTTP}
}

// Event is one Events API v2 request body.
type Event struct {
	RoutingKey  string   `json:"routing_key"`
	EventAction string   `json:"event_action"`
	DedupKey    string   `json:"dedup_key"`
	Payload     *Payload `json:"payload,omitempty"`
	Client      string   `json:"client,omitempty"`
	ClientURL   string   `json:"client_url,omitempty"`
}

// Payload is a trigger event's PD-CEF fields.
type Payload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp,omitempty"`
	Component     string         `json:"component,omitempty"`
	Group         string         `json:"group,omitempty"`
	Class         string         `json:"class,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// Send triggers an alert for each firing alert of m and resolves each
// resolved one. A test page (zwatch notify test, zwatch simulate) is
// resolved testResolveAfter after it opened: PagerDuty documents no way to
// send an event that opens no incident. A retry repeats the events already
// accepted; PagerDuty folds a repeated trigger into the open alert's log
// and drops a repeated resolve.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	n := m.Notification
	var opened []string
	for _, a := range n.Alerts {
		key := DedupKey(n, a)
		if a.State == alert.Resolved {
			if err := s.post(ctx, Event{EventAction: "resolve", DedupKey: key}); err != nil {
				return err
			}
			continue
		}
		if err := s.post(ctx, s.trigger(m, a, key)); err != nil {
			return err
		}
		opened = append(opened, key)
	}
	if !n.Test || len(opened) == 0 {
		return nil
	}
	if err := pause(ctx, testResolveAfter); err != nil {
		return err
	}
	for _, key := range opened {
		if err := s.post(ctx, Event{EventAction: "resolve", DedupKey: key}); err != nil {
			return err
		}
	}
	return nil
}

// pause waits d, or half the time ctx has left if that is less, so the
// resolve still goes out within notify.send_timeout.
func pause(ctx context.Context, d time.Duration) error {
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/2)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Sender) trigger(m channel.Message, a alert.Alert, key string) Event {
	n := m.Notification
	details := map[string]any{
		"text":         channel.CutBytes(m.Text, textMax),
		"alert":        a.Name,
		"labels":       a.Labels,
		"since":        a.StartsAt.UTC().Format(time.RFC3339),
		"notification": n.ID,
	}
	if a.Description != "" {
		details["description"] = a.Description
	}
	if len(a.Evidence) > 0 {
		details["evidence"] = a.Evidence
	}
	if a.Replacement != nil {
		details["replacement"] = a.Replacement
	}
	e := Event{EventAction: "trigger", DedupKey: key, Payload: &Payload{
		Summary:       channel.CutRunes(Summary(n, a), summaryMax),
		Source:        n.Host,
		Severity:      Severity(a.Severity),
		Component:     channel.IncidentSubject(a),
		Group:         n.GroupKey,
		Class:         a.Name,
		CustomDetails: details,
	}}
	if !m.Created.IsZero() {
		e.Payload.Timestamp = m.Created.UTC().Format(time.RFC3339Nano)
	}
	if s.clientURL != "" {
		e.Client, e.ClientURL = "zwatch on "+n.Host, s.clientURL
	}
	return e
}

func (s *Sender) post(ctx context.Context, e Event) error {
	e.RoutingKey = s.key
	return channel.Do(ctx, s.client, channel.Request{
		Service: "pagerduty", URL: s.url, ContentType: "application/json", Payload: e, Secrets: []string{s.key},
		Check: func(raw []byte) error {
			// 202 {"status": "success", "message": "Event processed", ...}.
			var r struct {
				Status string `json:"status"`
			}
			if json.Unmarshal(raw, &r) == nil && r.Status != "" && r.Status != "success" {
				return &channel.ServiceError{Service: "pagerduty", Status: http.StatusAccepted, Detail: r.Status + ": " + channel.Detail(raw)}
			}
			return nil
		},
	})
}

// DedupKey names one zwatch alert in PagerDuty: its group (host and pool)
// for people reading it, its fingerprint (a hash of all its labels, the
// host's among them) to be unique. Tests and simulations get keys of their
// own, so they never resolve a real alert about the same disk.
func DedupKey(n alert.Notification, a alert.Alert) string {
	return channel.IncidentKey(n, a, dedupKeyMax)
}

// Summary is the alert's line with its state and host: PagerDuty titles the
// alert and the incident with it.
func Summary(n alert.Notification, a alert.Alert) string {
	state := strings.ToUpper(string(a.Severity))
	if a.State == alert.Resolved {
		state = "RESOLVED"
	}
	return channel.IncidentLine(n, a, state)
}

// Severity maps zwatch's severities onto PagerDuty's. PagerDuty's "error"
// stays unused: zwatch has nothing between critical (data at risk) and
// warning.
func Severity(s alert.Severity) string {
	switch s {
	case alert.Critical:
		return "critical"
	case alert.Info:
		return "info"
	}
	return "warning"
}

// Hint explains the Events API's refusals in PagerDuty's words.
func (s *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		return ""
	}
	d := strings.ToLower(se.Detail)
	switch {
	case se.Status == http.StatusBadRequest && strings.Contains(d, "routing_key"):
		return "PagerDuty does not accept the routing key: copy the Integration Key (32 characters) of an Events API v2 integration on the service (Services → your service → Integrations); a REST API key or a disabled integration does not work"
	case se.Status == http.StatusBadRequest:
		return "PagerDuty found the event invalid (400 Bad Request, which PagerDuty says not to retry): " + se.Detail + "; the outbox keeps retrying until notify.retry_for, then dead-letters it"
	case se.Status == http.StatusTooManyRequests:
		return "PagerDuty throttles events for this routing key (429 Too Many Requests, about 120 events a minute per integration key): the outbox retries later by itself"
	case se.Status == http.StatusNotFound:
		return "no Events API at url: use " + DefaultURL + ", or " + EUURL + " for an account in the EU service region"
	case se.Status == http.StatusRequestEntityTooLarge:
		return "PagerDuty limits an event to 512 KB"
	case se.Status >= 500:
		return "PagerDuty had an internal error processing the event (5xx): the outbox retries later by itself, as PagerDuty asks"
	}
	return ""
}

// AddressKey is url when set.
func (s *Sender) AddressKey() string {
	if s.customURL {
		return "url"
	}
	return "the service address"
}
