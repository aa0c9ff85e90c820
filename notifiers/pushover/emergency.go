package pushover

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Emergency priority (https://pushover.net/api#priority): with emergency
// set, a critical page is sent at priority 2, which Pushover repeats every
// Retry until someone acknowledges it in the app or Expire has passed. Its
// receipt (https://pushover.net/api/receipts) is polled, outbound only, and
// the acknowledgement in the app acknowledges the incident, as `zwatch ack`
// would; the incident's other emergency pages stop ringing then, and all
// of them stop when the incident is resolved. Only the configured user or
// group's devices can acknowledge, and the receipts are read with the
// application's token: nothing from outside is obeyed.

// Emergency is a pushover channel's emergency: key.
type Emergency struct {
	// Retry: how often Pushover repeats the page (at least 30s).
	Retry config.Duration `yaml:"retry"`
	// Expire: how long it repeats it (at most 3h, Pushover's limit).
	Expire config.Duration `yaml:"expire"`
}

// Pushover's bounds for retry and expire, and how often a receipt may be
// polled ("no faster than once every 5 seconds").
const (
	minRetry        = 30 * time.Second
	maxExpire       = 3 * time.Hour
	receiptPoll     = 15 * time.Second
	maxReceipts     = 64
	receiptIDLength = 30
)

func (e *Emergency) validate(p string, errs *config.Errors, api string) {
	if e.Retry.D() < minRetry {
		errs.Add(p+".retry", config.FormatDuration(e.Retry.D()), "must be at least 30s (Pushover refuses a shorter retry)")
	}
	switch {
	case e.Expire.D() > maxExpire:
		errs.Add(p+".expire", config.FormatDuration(e.Expire.D()), "must be at most 3h (Pushover's limit)")
	case e.Expire.D() < e.Retry.D():
		errs.Add(p+".expire", config.FormatDuration(e.Expire.D()), "must be at least retry (%s): the page would ring once", config.FormatDuration(e.Retry.D()))
	}
	if api != "" && !strings.HasSuffix(api, "/messages.json") {
		errs.Add(p, nil, "needs an api_url that ends in /messages.json: the receipts API is found beside it")
	}
}

// receipts are the emergency pages whose acknowledgement is awaited.
type receipts struct {
	mu      sync.Mutex
	pending map[string]pendingReceipt // receipt → what it pages
}

type pendingReceipt struct {
	incident string
	until    time.Time // its expiry: polled no longer after it
}

func (r *receipts) add(receipt, incident string, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string]pendingReceipt{}
	}
	if len(r.pending) >= maxReceipts { // bounded: the one expiring first goes
		var first string
		for id, p := range r.pending {
			if first == "" || p.until.Before(r.pending[first].until) {
				first = id
			}
		}
		delete(r.pending, first)
	}
	r.pending[receipt] = pendingReceipt{incident: incident, until: until}
}

// take removes and returns the receipts of incident.
func (r *receipts) take(incident string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id, p := range r.pending {
		if p.incident == incident {
			out = append(out, id)
			delete(r.pending, id)
		}
	}
	return out
}

func (r *receipts) snapshot() map[string]pendingReceipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]pendingReceipt, len(r.pending))
	for id, p := range r.pending {
		out[id] = p
	}
	return out
}

func (r *receipts) drop(receipt string) {
	r.mu.Lock()
	delete(r.pending, receipt)
	r.mu.Unlock()
}

// emergencyPage tells a page that goes at priority 2: a critical one of an
// incident, never a resolved notice or a test.
func (p *Sender) emergencyPage(m channel.Message) bool {
	return p.emergency != nil && !m.Resolved && !m.Test && !m.Notification.Test && m.Severity == alert.Critical && m.Incident() != ""
}

// receiptsAPI is where the receipts of api's messages are read.
func (p *Sender) receiptsAPI() string {
	return strings.TrimSuffix(p.api, "messages.json") + "receipts/"
}

// noteReceipt keeps the receipt of an emergency page Pushover queued.
func (p *Sender) noteReceipt(raw []byte, incident string) {
	var r struct {
		Receipt string `json:"receipt"`
	}
	if json.Unmarshal(raw, &r) != nil || !validReceipt(r.Receipt) {
		return
	}
	p.receipts.add(r.Receipt, incident, time.Now().Add(p.emergency.Expire.D()))
}

// validReceipt: 30 characters of [A-Za-z0-9] (https://pushover.net/api/receipts).
func validReceipt(s string) bool {
	return len(s) == receiptIDLength && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == ""
}

// cancel stops the repeats of the incident's emergency pages
// (POST receipts/<receipt>/cancel.json).
func (p *Sender) cancel(ctx context.Context, incident string) error {
	var errs []error
	for _, id := range p.receipts.take(incident) {
		err := channel.Do(ctx, p.client, channel.Request{
			Service: "pushover", URL: p.receiptsAPI() + id + "/cancel.json", ContentType: "application/x-www-form-urlencoded",
			Payload: url.Values{"token": {p.token}}, Secrets: []string{p.token},
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("pushover: stop the emergency repeats of incident %s: %w", incident, errs[0])
	}
	return nil
}

var _ channel.Answering = (*Sender)(nil)

// EnableAnswers: with emergency set, critical pages are answered by
// acknowledging them in the Pushover app. The key is not needed: the
// receipts are read with the application's own token.
func (p *Sender) EnableAnswers(_ answer.Key, name string) bool {
	if p.emergency == nil {
		return false
	}
	p.name = name
	return true
}

// receiptStatus is the part of a receipt's status zwatch reads.
type receiptStatus struct {
	Status               int    `json:"status"`
	Acknowledged         int    `json:"acknowledged"`
	AcknowledgedAt       int64  `json:"acknowledged_at"`
	AcknowledgedByDevice string `json:"acknowledged_by_device"`
	Expired              int    `json:"expired"`
}

// Answers polls the pending receipts until ctx ends. A restart forgets
// them: an acknowledgement after it is not seen (answer with zwatch ack),
// and Pushover stops repeating at expire.
func (p *Sender) Answers(ctx context.Context, do answer.Func, log *slog.Logger) error {
	if p.emergency == nil {
		return nil
	}
	t := time.NewTicker(p.pollEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			p.pollReceipts(ctx, do, log)
		}
	}
}

func (p *Sender) pollEvery() time.Duration {
	if p.poll > 0 {
		return p.poll
	}
	return receiptPoll
}

// pollReceipts reads each pending receipt once.
func (p *Sender) pollReceipts(ctx context.Context, do answer.Func, log *slog.Logger) {
	for id, pend := range p.receipts.snapshot() {
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(pend.until.Add(time.Minute)) {
			p.receipts.drop(id)
			continue
		}
		var st receiptStatus
		err := channel.Do(ctx, p.client, channel.Request{
			Service: "pushover", Method: http.MethodGet, URL: p.receiptsAPI() + id + ".json?token=" + url.QueryEscape(p.token),
			Secrets: []string{p.token},
			Check: func(raw []byte) error {
				if err := json.Unmarshal(raw, &st); err != nil || st.Status != 1 {
					return &channel.ServiceError{Service: "pushover", Status: http.StatusOK, Detail: channel.Detail(raw)}
				}
				return nil
			},
		})
		switch {
		case err != nil:
			log.Warn("pushover answers: reading an emergency page's receipt failed; trying again", "channel", p.name, "incident", pend.incident, "err", err)
		case st.Acknowledged == 1:
			p.acknowledged(ctx, pend.incident, st, do, log)
		case st.Expired == 1:
			log.Info("pushover answers: an emergency page expired unacknowledged", "channel", p.name, "incident", pend.incident)
			p.receipts.drop(id)
		}
	}
}

// acknowledged carries out an acknowledgement made in the app, and stops
// the incident's other emergency pages.
func (p *Sender) acknowledged(ctx context.Context, incident string, st receiptStatus, do answer.Func, log *slog.Logger) {
	who := "pushover"
	if st.AcknowledgedByDevice != "" {
		who = "pushover device " + st.AcknowledgedByDevice
	}
	out, err := do(ctx, answer.Action{Verb: answer.Ack, Incident: incident}, who, "pushover:"+p.name)
	if err != nil {
		log.Warn("pushover answers: the acknowledgement made in the app was not carried out", "channel", p.name, "incident", incident, "err", err)
	} else {
		log.Info("pushover answers: incident acknowledged in the app", "channel", p.name, "incident", incident, "host", out.Host,
			"by", who, "at", time.Unix(st.AcknowledgedAt, 0).UTC().Format(time.RFC3339))
	}
	if err := p.cancel(ctx, incident); err != nil {
		log.Warn("pushover answers: "+err.Error(), "channel", p.name)
	}
}

// emergencyForm sets priority 2 with the retry and expire.
func (p *Sender) emergencyForm(form url.Values) {
	form.Set("priority", "2")
	form.Set("retry", strconv.Itoa(int(p.emergency.Retry.D()/time.Second)))
	form.Set("expire", strconv.Itoa(int(p.emergency.Expire.D()/time.Second)))
}
