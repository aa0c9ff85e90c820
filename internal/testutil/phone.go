package testutil

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// PhoneWait is how long Phone.Wait waits for a matching notification.
const PhoneWait = 30 * time.Second

// Phone is a webhook receiver standing in for the person's phone: an
// httptest server that decodes every JSON body posted to it as a T (for
// zwatch's webhook channel, notifiers.WebhookPayload) and keeps them in
// order of arrival.
type Phone[T any] struct {
	// URL is where to post: the webhook channel's url.
	URL string

	mu      sync.Mutex
	got     []T
	arrived chan struct{} // a wake-up for Wait, never blocks the handler
}

// NewPhone starts a Phone, closed when the test ends. A body that is not
// JSON for a T fails the test.
func NewPhone[T any](t testing.TB) *Phone[T] {
	t.Helper()
	p := &Phone[T]{arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var pl T
		if err := json.Unmarshal(body, &pl); err != nil {
			t.Errorf("webhook body: %v: %s", err, body)
		}
		p.mu.Lock()
		p.got = append(p.got, pl)
		p.mu.Unlock()
		select {
		case p.arrived <- struct{}{}:
		default: // a wake-up is already pending
		}
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Received returns a copy of everything received so far.
func (p *Phone[T]) Received() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]T(nil), p.got...)
}

// Count returns how many received notifications match.
func (p *Phone[T]) Count(match func(T) bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pl := range p.got {
		if match(pl) {
			n++
		}
	}
	return n
}

// Wait returns the first received notification that matches, waiting up to
// PhoneWait for one to arrive; if none does, it fails the test with what
// was received, naming the notification it waited for by what.
func (p *Phone[T]) Wait(t testing.TB, what string, match func(T) bool) T {
	t.Helper()
	deadline := time.After(PhoneWait)
	for {
		p.mu.Lock()
		for _, pl := range p.got {
			if match(pl) {
				p.mu.Unlock()
				return pl
			}
		}
		p.mu.Unlock()
		select {
		case <-p.arrived:
		case <-deadline:
			got := p.Received()
			t.Fatalf("no %s notification; got %d: %+v", what, len(got), got)
		}
	}
}
