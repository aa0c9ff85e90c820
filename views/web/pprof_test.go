package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The runtime profiles are served only with http.pprof, behind the login,
// and only to reads.
func TestPprofOnlyWhenAskedAndBehindLogin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	off := client{t: t, base: serve(t, f, nil), user: loginName, pass: loginPassword}
	if r := off.get("/debug/pprof/heap"); r.code != http.StatusNotFound {
		t.Errorf("pprof off: /debug/pprof/heap answered %d, want 404", r.code)
	}
	f.cfg.HTTP.Pprof = true
	base := serve(t, f, nil)
	if r := (client{t: t, base: base}).get("/debug/pprof/heap"); r.code != http.StatusUnauthorized {
		t.Errorf("pprof on, no login: %d, want 401", r.code)
	}
	on := client{t: t, base: base, user: loginName, pass: loginPassword}
	for path, want := range map[string]string{
		"/debug/pprof/":                    "goroutine",
		"/debug/pprof/heap?debug=1":        "heap profile:",
		"/debug/pprof/goroutine?debug=1":   "goroutine profile:",
		"/debug/pprof/profile?seconds=1":   "", // a binary CPU profile
		"/debug/pprof/allocs?debug=1&gc=1": "heap profile:",
	} {
		r := on.get(path)
		if r.code != http.StatusOK || !strings.Contains(r.body, want) || r.body == "" {
			t.Errorf("pprof on, %s: %d %.200q, want 200 with %q", path, r.code, r.body, want)
		}
	}
	if r := on.do(http.MethodPost, "/debug/pprof/heap"); r.code != http.StatusMethodNotAllowed {
		t.Errorf("POST /debug/pprof/heap: %d, want 405", r.code)
	}
}
