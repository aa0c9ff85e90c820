package notifiers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	nhttp "github.com/nikoksr/notify/service/http"
)

// ServiceError is a refusal from a service's API: an HTTP status outside
// 2xx, or a 200 whose body says no (Slack, Telegram, Pushover).
type ServiceError struct {
	Service string
	Status  int
	// Detail is the service's own words, cut short.
	Detail string
}

func (e *ServiceError) Error() string {
	s := fmt.Sprintf("%s answered HTTP %d", e.Service, e.Status)
	if t := http.StatusText(e.Status); t != "" {
		s += " " + t
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// request is one HTTP call to a service.
type request struct {
	service     string
	method      string
	url         string
	header      http.Header
	contentType string
	payload     any // marshalled by contentType: JSON value or url.Values
	// check inspects a 2xx answer for an in-body refusal; nil accepts any 2xx.
	check func(body []byte) error
	// secrets are masked out of every error (tokens in URL paths).
	secrets []string
}

// do sends r through nikoksr/notify's http service, which owns the request
// building; zwatch adds payload encoding, answer checking and redaction.
func do(ctx context.Context, client *http.Client, r request) error {
	svc := nhttp.New()
	svc.WithClient(client)
	svc.Serializer = serializer{}
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	h := r.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", "zwatch")
	}
	svc.AddReceivers(&nhttp.Webhook{
		ContentType: r.contentType, Header: h, Method: method, URL: r.url,
		BuildPayload: func(string, string) any { return r.payload },
	})
	var refused error
	svc.PostSend(func(_ *http.Request, resp *http.Response) error {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			refused = &ServiceError{Service: r.service, Status: resp.StatusCode, Detail: detail(raw)}
			return refused
		}
		if r.check != nil {
			if err := r.check(raw); err != nil {
				refused = err
				return err
			}
		}
		return nil
	})
	err := svc.Send(ctx, "", "")
	if err == nil {
		return nil
	}
	if refused != nil {
		// notify wraps with the URL, which may hold a token: report ours.
		return redact(refused, r.secrets...)
	}
	return redact(fmt.Errorf("%s: %w", r.service, err), r.secrets...)
}

// serializer encodes JSON bodies and form bodies; notify's default knows
// only JSON and plain text.
type serializer struct{}

func (serializer) Marshal(contentType string, payload any) ([]byte, error) {
	switch {
	case strings.HasPrefix(contentType, "application/x-www-form-urlencoded"):
		v, ok := payload.(url.Values)
		if !ok {
			return nil, fmt.Errorf("form payload is %T, want url.Values", payload)
		}
		return []byte(v.Encode()), nil
	case strings.HasPrefix(contentType, "application/json"):
		return json.Marshal(payload)
	}
	return nil, fmt.Errorf("unsupported content type %q", contentType)
}

// detail makes a short readable reason from an API's error body.
func detail(raw []byte) string {
	var v struct {
		Description string   `json:"description"` // Telegram
		Error       any      `json:"error"`       // Slack, Gotify, ntfy
		Errors      []string `json:"errors"`      // Pushover
		Message     string   `json:"message"`     // Discord
		ErrorDesc   string   `json:"errorDescription"`
	}
	if json.Unmarshal(raw, &v) == nil {
		var parts []string
		for _, s := range []string{v.Description, v.Message, v.ErrorDesc} {
			if s != "" {
				parts = append(parts, s)
			}
		}
		if s, ok := v.Error.(string); ok && s != "" {
			parts = append(parts, s)
		}
		parts = append(parts, v.Errors...)
		if len(parts) > 0 {
			return cutRunes(strings.Join(parts, "; "), 300)
		}
	}
	return cutRunes(oneLine(string(raw)), 300)
}

// redactedError hides secrets in an error's text and keeps its chain, so
// hints can still find the net or TLS error inside.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	s := e.err.Error()
	secs := slices.Clone(e.secrets)
	// Longest first, so a token inside a secret URL does not leave the rest.
	slices.SortFunc(secs, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range secs {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "******")
		}
	}
	return s
}

func (e *redactedError) Unwrap() error { return e.err }

func redact(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	var keep []string
	for _, s := range secrets {
		if s != "" {
			keep = append(keep, s)
			// URLs appear escaped inside url.Error text as well.
			if q := url.PathEscape(s); q != s {
				keep = append(keep, q)
			}
		}
	}
	if len(keep) == 0 {
		return err
	}
	var re *redactedError
	if errors.As(err, &re) {
		keep = append(keep, re.secrets...)
	}
	return &redactedError{err: err, secrets: keep}
}
