// Package opsgenie is the Opsgenie channel: alerts through the Alert API
// (POST /v2/alerts, closed with POST /v2/alerts/{alias}/close) with an API
// integration's key. notify has no Opsgenie service.
//
// Each zwatch alert is one Opsgenie alert. Its alias comes from the
// notification's group and the alert's fingerprint, so the resolved notice
// closes exactly the alert its page opened. An alias per group would not
// do: a notice is sent only for the alerts that have news, so the group of
// pool vault may send "[RESOLVED] capacity" while its disk fault still
// fires, and a group alias would close the disk fault with it.
package opsgenie

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the opsgenie channel type.
var Service = channel.Define[Config]("opsgenie")

// DefaultAPI is the Alert API's base unless api_url says otherwise; an
// account on Opsgenie's EU instance uses EUAPI.
const (
	DefaultAPI = "https://api.opsgenie.com"
	EUAPI      = "https://api.eu.opsgenie.com"
)

// The Alert API's limits, in characters (details: all keys and values).
const (
	messageMax     = 130
	aliasMax       = 512
	descriptionMax = 15000
	entityMax      = 512
	sourceMax      = 100
	tagMax         = 50
	tagsMax        = 20
	detailsMax     = 8000
	noteMax        = 25000
)

// Config is an opsgenie channel's own keys.
type Config struct {
	// APIKey is the key of an API integration (Settings → Integrations → API).
	APIKey config.Secret `yaml:"api_key"`
	// APIURL overrides the API base: EUAPI, a proxy.
	APIURL string `yaml:"api_url"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.Need(errs, p+".api_key", c.APIKey.IsSet(), "empty: set the API key of an Opsgenie API integration (Settings → Integrations → API)")
	channel.OptionalURL(errs, p+".api_url", c.APIURL)
	if u, err := url.Parse(c.APIURL); err == nil && u.Host != "" && strings.Trim(u.Path, "/") != "" {
		errs.Add(p+".api_url", c.APIURL, "holds a path: set only the base, %s or %s", DefaultAPI, EUAPI)
	}
}

// HasLiteralSecret reports an API key written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.APIKey.Literal }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender creates an alert per firing alert of a notification and closes
// one per resolved alert.
type Sender struct {
	api, key  string
	customAPI bool
	client    *http.Client
}

// statusPoll is how often a test asks whether Opsgenie processed its alert.
const statusPoll = 500 * time.Millisecond

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	return &Sender{api: strutil.FirstNonEmpty(strings.TrimRight(c.APIURL, "/"), DefaultAPI), key: c.APIKey.Value,
		customAPI: c.APIURL != "", client: env.HTTP}
}

// Alert is a Create Alert request body.
type Alert struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	Source      string            `json:"source"`
	Priority    string            `json:"priority"`
}

// Send creates or closes the alerts of m. Opsgenie answers 202 and
// processes requests later; a test alert (zwatch notify test, zwatch
// simulate) is closed once Opsgenie reports it created, so the close
// cannot overtake it. A retry repeats the requests already accepted:
// Opsgenie counts a repeated alias on its open alert instead of opening
// another, and a repeated close finds nothing open.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	n := m.Notification
	for _, a := range n.Alerts {
		alias := Alias(n, a)
		if a.State == alert.Resolved {
			if err := s.close(ctx, alias, n, a); err != nil {
				return err
			}
			continue
		}
		id, err := s.create(ctx, s.alert(m, a, alias))
		if err != nil {
			return err
		}
		if n.Test {
			if err := s.awaitProcessed(ctx, id); err != nil {
				return err
			}
			if err := s.close(ctx, alias, n, a); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Sender) header() http.Header {
	h := http.Header{}
	h.Set("Authorization", "GenieKey "+s.key)
	return h
}

// create posts al and returns the requestId of Opsgenie's 202.
func (s *Sender) create(ctx context.Context, al Alert) (string, error) {
	var accepted struct {
		RequestID string `json:"requestId"`
	}
	err := channel.Do(ctx, s.client, channel.Request{
		Service: "opsgenie", URL: s.api + "/v2/alerts", Header: s.header(), ContentType: "application/json",
		Payload: al, Secrets: []string{s.key},
		Check: func(raw []byte) error { _ = json.Unmarshal(raw, &accepted); return nil },
	})
	return accepted.RequestID, err
}

func (s *Sender) close(ctx context.Context, alias string, n alert.Notification, a alert.Alert) error {
	note := "zwatch: resolved"
	if a.EndsAt != nil && a.EndsAt.After(a.StartsAt) {
		note += " after " + a.EndsAt.Sub(a.StartsAt).Round(time.Second).String()
	}
	if n.Test {
		note = "zwatch: test alert, closed by zwatch notify test"
	}
	return channel.Do(ctx, s.client, channel.Request{
		Service: "opsgenie", URL: s.api + "/v2/alerts/" + url.PathEscape(alias) + "/close?identifierType=alias",
		Header: s.header(), ContentType: "application/json", Secrets: []string{s.key},
		Payload: map[string]string{"source": channel.CutRunes(n.Host, sourceMax), "note": channel.CutRunes(note, noteMax)},
	})
}

// awaitProcessed asks Get Request Status until Opsgenie has processed the
// request id, for at most half the time ctx has left (the close must still
// go out). A request not processed yet is a 404. It returns Opsgenie's
// refusal when the alert was not created.
func (s *Sender) awaitProcessed(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	wait := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)/2)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		done, err := s.requestStatus(wctx, id)
		if done || err != nil {
			return err
		}
		select {
		case <-wctx.Done():
			// Not processed in time: close anyway, the likelier order.
			return ctx.Err()
		case <-time.After(statusPoll):
		}
	}
}

// requestStatus reports whether the request is processed; a processed
// request that failed is an error in Opsgenie's words.
func (s *Sender) requestStatus(ctx context.Context, id string) (bool, error) {
	var r struct {
		Data struct {
			IsSuccess bool   `json:"isSuccess"`
			Status    string `json:"status"`
		} `json:"data"`
	}
	err := channel.Do(ctx, s.client, channel.Request{
		Service: "opsgenie", Method: http.MethodGet, URL: s.api + "/v2/alerts/requests/" + url.PathEscape(id),
		Header: s.header(), Secrets: []string{s.key},
		Check: func(raw []byte) error {
			if err := json.Unmarshal(raw, &r); err != nil {
				return fmt.Errorf("opsgenie: request status: %w", err)
			}
			return nil
		},
	})
	if se, ok := channel.AsServiceError(err); ok && se.Status == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			// The wait is over: not processed in time.
			return false, nil
		}
		return false, err
	}
	if !r.Data.IsSuccess {
		return true, &channel.ServiceError{Service: "opsgenie", Status: http.StatusOK, Detail: "request not processed: " + channel.CutRunes(r.Data.Status, 300)}
	}
	return true, nil
}

func (s *Sender) alert(m channel.Message, a alert.Alert, alias string) Alert {
	n := m.Notification
	tags := []string{"zwatch", n.Host, string(a.Severity), a.Name}
	if p := a.Labels["pool"]; p != "" {
		tags = append(tags, "pool:"+p)
	}
	if n.Test {
		tags = append(tags, "test")
	}
	for i := range tags {
		tags[i] = channel.CutRunes(tags[i], tagMax)
	}
	return Alert{
		Message:     channel.CutRunes(Message(n, a), messageMax),
		Alias:       alias,
		Description: channel.CutRunes(m.Text, descriptionMax),
		Tags:        tags[:min(len(tags), tagsMax)],
		Details:     details(n, a),
		Entity:      channel.CutRunes(channel.IncidentSubject(a), entityMax),
		Source:      channel.CutRunes(n.Host, sourceMax),
		Priority:    Priority(a.Severity),
	}
}

// details are the alert's labels, evidence and what its replacement needs,
// as far as they fit Opsgenie's 8,000 characters.
func details(n alert.Notification, a alert.Alert) map[string]string {
	type kv struct{ k, v string }
	var all []kv
	add := func(k, v string) {
		if v != "" {
			all = append(all, kv{k, v})
		}
	}
	add("alert", a.Name)
	add("severity", string(a.Severity))
	add("since", a.StartsAt.UTC().Format(time.RFC3339))
	add("notification", n.ID)
	for _, k := range sortedKeys(a.Labels) {
		add("label."+k, a.Labels[k])
	}
	if r := a.Replacement; r != nil {
		add("replacement.pool", r.Pool)
		add("replacement.vdev", r.TopVdev)
		add("replacement.vdev_guid", r.VdevGUID)
		add("replacement.vdev_path", r.VdevPath)
		if r.Disk != nil {
			add("replacement.disk_serial", r.Disk.Serial)
			add("replacement.disk_by_id", r.Disk.ByID)
		}
	}
	for _, k := range sortedKeys(a.Evidence) {
		add("evidence."+k, a.Evidence[k])
	}
	out := map[string]string{}
	left := detailsMax
	for _, e := range all {
		left -= len([]rune(e.k))
		if left <= 1 {
			break
		}
		v := channel.CutRunes(e.v, left)
		out[e.k] = v
		left -= len([]rune(v))
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Alias names one zwatch alert in Opsgenie: its group (host and pool) for
// people reading it, its fingerprint (a hash of all its labels, the host's
// among them) to be unique. Characters other than letters, digits and
// ._:=- become _, so it travels unchanged in the close URL's path. Tests
// and simulations get aliases of their own, so they never close a real
// alert about the same disk.
func Alias(n alert.Notification, a alert.Alert) string {
	return channel.IncidentKey(n, a, aliasMax)
}

// Message is the alert's line with its host, Opsgenie's title for it.
func Message(n alert.Notification, a alert.Alert) string {
	return channel.IncidentLine(n, a, strings.ToUpper(string(a.Severity)))
}

// Priority maps zwatch's severities onto Opsgenie's: critical (data at
// risk) is P1, warning P3 (Opsgenie's default), info P5.
func Priority(s alert.Severity) string {
	switch s {
	case alert.Critical:
		return "P1"
	case alert.Info:
		return "P5"
	}
	return "P3"
}

// Hint explains the Alert API's refusals in Opsgenie's words.
func (s *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		return ""
	}
	region := ""
	if !s.customAPI {
		region = "; an account on the EU instance needs api_url: " + EUAPI
	}
	switch se.Status {
	case http.StatusUnauthorized:
		return "Opsgenie did not accept the key (401: apiKey is invalid or integration is disabled): copy the API key of an API integration (Settings → Integrations → API) and enable the integration" + region
	case http.StatusPaymentRequired:
		return "Opsgenie: the key is valid, but the account's subscription plan cannot create alerts (402)"
	case http.StatusForbidden:
		return "Opsgenie: the key is valid but may not create alerts (403): use the key of an API integration with Create and Update Access, not a user's API key"
	case http.StatusNotFound:
		return "Opsgenie found no such resource or handler (404): set api_url to " + DefaultAPI + " or " + EUAPI + ", nothing after the host"
	case http.StatusUnprocessableEntity:
		return "Opsgenie found semantic errors in the request body (422): " + se.Detail
	case http.StatusTooManyRequests:
		return "Opsgenie throttles this integration (429 Too Many Requests): the outbox retries later by itself"
	}
	return ""
}

// AddressKey is api_url when set.
func (s *Sender) AddressKey() string {
	if s.customAPI {
		return "api_url"
	}
	return "the service address"
}
