package channel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
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

// Request is one HTTP call to a service.
type Request struct {
	// Service names the service in errors: "ntfy".
	Service string
	// Method defaults to POST.
	Method string
	URL    string
	Header http.Header
	// ContentType selects the encoding of Payload: application/json (any
	// JSON value) or application/x-www-form-urlencoded (url.Values).
	ContentType string
	// Payload is the request body; nil sends none (a GET).
	Payload any
	// Check inspects a 2xx answer for an in-body refusal; nil accepts any 2xx.
	Check func(body []byte) error
	// Secrets are masked out of every error (tokens in URL paths, headers).
	Secrets []string
}

// maxAnswer bounds how much of an answer is read: enough for any refusal.
const maxAnswer = 64 << 10

// Do sends r with client and returns nil for an accepted request, a
// *ServiceError for a refusal, or the transport's error; none of them holds
// r.Secrets.
func Do(ctx context.Context, client *http.Client, r Request) error {
	body, err := encode(r.ContentType, r.Payload)
	if err != nil {
		return fmt.Errorf("%s: marshal payload: %w", r.Service, err)
	}
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, bytes.NewReader(body))
	if err != nil {
		return Redact(fmt.Errorf("%s: %w", r.Service, err), r.Secrets...)
	}
	if r.Header != nil {
		req.Header = r.Header.Clone()
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "zwatch")
	}
	if req.Header.Get("Content-Type") == "" && r.Payload != nil {
		req.Header.Set("Content-Type", r.ContentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		// url.Error repeats the URL, which may hold a token.
		return Redact(fmt.Errorf("%s: %w", r.Service, err), r.Secrets...)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Redact(&ServiceError{Service: r.Service, Status: resp.StatusCode, Detail: Detail(raw)}, r.Secrets...)
	}
	if r.Check != nil {
		if err := r.Check(raw); err != nil {
			return Redact(err, r.Secrets...)
		}
	}
	return nil
}

func encode(contentType string, payload any) ([]byte, error) {
	switch {
	case payload == nil:
		return nil, nil
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

// Detail makes a short readable reason from an API's error body.
func Detail(raw []byte) string {
	var v struct {
		Description string   `json:"description"` // Telegram
		Error       any      `json:"error"`       // Slack, Gotify, ntfy
		Errors      []string `json:"errors"`      // Pushover
		Message     string   `json:"message"`     // Discord
		ErrorDesc   string   `json:"errorDescription"`
		Errcode     string   `json:"errcode"`        // Matrix
		RetryAfter  int64    `json:"retry_after_ms"` // Matrix
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
		if v.RetryAfter > 0 {
			parts = append(parts, fmt.Sprintf("retry after %d ms", v.RetryAfter))
		}
		if len(parts) > 0 || v.Errcode != "" {
			s := strings.Join(parts, "; ")
			if v.Errcode != "" {
				// The code is what hints and people search for.
				s = strings.TrimSuffix(v.Errcode+": "+s, ": ")
			}
			return CutRunes(s, 300)
		}
	}
	return CutRunes(OneLine(string(raw)), 300)
}

// redactedError hides secrets in an error's text and keeps its chain, so
// hints can still find the net or TLS error inside.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	s := e.err.Error()
	for _, sec := range e.secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "******")
		}
	}
	return s
}

func (e *redactedError) Unwrap() error { return e.err }

// Redact returns err with every secret (and its URL-escaped form) masked
// in its text; errors.As and errors.Is still see what it wraps.
func Redact(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	var keep []string
	for _, s := range secrets {
		if s != "" {
			keep = append(keep, s)
			// URLs appear escaped inside url.Error text as well: whole, or
			// re-encoded by net/url.
			if q := url.PathEscape(s); q != s {
				keep = append(keep, q)
			}
			if u, err := url.Parse(s); err == nil && u.Host != "" && u.String() != s {
				keep = append(keep, u.String())
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
	// Longest first, so a token inside a secret URL does not leave the rest.
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	return &redactedError{err: err, secrets: keep}
}
