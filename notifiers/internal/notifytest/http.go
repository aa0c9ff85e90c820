// Package notifytest holds what the notifiers' tests share: real local
// servers standing in for the services (HTTP and SMTP), a throwaway
// certificate, a bus, and the sample notification with its expected text.
package notifytest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Hit is one HTTP request a fake service received.
type Hit struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
	// Context ends when the sender gives up on the request.
	Context context.Context
}

// JSON decodes the body as a JSON object.
func (h Hit) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(h.Body, &v); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, h.Body)
	}
	return v
}

// HTTPSink is a real HTTP server standing in for a service's API.
type HTTPSink struct {
	*httptest.Server
	// Got receives every recorded request.
	Got chan Hit

	mu     sync.Mutex
	hits   []Hit
	answer func(w http.ResponseWriter, h Hit)
	reply  string
}

// StartHTTP serves until the test ends, answering 200 with reply.
func StartHTTP(t testing.TB, reply string) *HTTPSink {
	t.Helper()
	s := &HTTPSink{Got: make(chan Hit, 1000), reply: reply}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := Hit{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: b, Context: r.Context()}
		s.mu.Lock()
		answer, reply := s.answer, s.reply
		s.mu.Unlock()
		if answer != nil {
			answer(w, h)
			return
		}
		s.Record(h)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(s.Close)
	return s
}

// Answer replaces the default answer; fn records the request itself if it
// should count.
func (s *HTTPSink) Answer(fn func(w http.ResponseWriter, h Hit)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = fn
}

// Reply changes the default answer's body.
func (s *HTTPSink) Reply(body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply = body
}

// Record counts h as received.
func (s *HTTPSink) Record(h Hit) {
	s.mu.Lock()
	s.hits = append(s.hits, h)
	s.mu.Unlock()
	s.Got <- h
}

// All is every recorded request so far.
func (s *HTTPSink) All() []Hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Hit(nil), s.hits...)
}

// Only is the one request s received; more or fewer fail the test.
func Only(t testing.TB, s *HTTPSink) Hit {
	t.Helper()
	hs := s.All()
	if len(hs) != 1 {
		t.Fatalf("service got %d requests, want 1", len(hs))
	}
	return hs[0]
}
