package web

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
)

//go:embed static
var staticFiles embed.FS

// contentSecurityPolicy allows only this server's own scripts, styles and
// fetches: no inline script, no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// server holds what the handlers share; nothing in it changes per request
// except the login cache.
type server struct {
	o     Options
	log   *slog.Logger
	pages *pageTemplates
}

// NewHandler is the status page, the API, the static files and /metrics
// behind the security headers, the method filter and the login.
func NewHandler(o Options) (http.Handler, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if isNilPointer(o.History) {
		o.History = nil // a nil *history.Store: history is off
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &server{o: o, log: o.Log, pages: pages}
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, fmt.Errorf("status page: embedded files: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.page)
	mux.HandleFunc("/api/hosts", s.apiHosts)
	mux.HandleFunc("/api/host", s.apiHost)
	mux.HandleFunc("/api/history", s.apiHistory)
	mux.HandleFunc("/api/events", s.apiEvents)
	mux.HandleFunc("/api/fleet", s.apiFleet)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "no such API endpoint: "+r.URL.Path+" (see /api/hosts, /api/host, /api/history, /api/events, /api/fleet)")
	})
	mux.Handle("/static/", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static))))
	if o.Metrics != nil {
		mux.Handle("/metrics", o.Metrics)
	}
	if o.Config.Pprof {
		mountPprof(mux)
	}
	writes := map[string]bool{}
	if o.Answers != nil && len(o.Config.Users) > 0 {
		mux.HandleFunc("/answer", s.answer)
		writes["/answer"] = true
	}
	auth := newBasicAuth(o.Config.Users)
	return securityHeaders(onlyReads(writes, auth.wrap(mux))), nil
}

// securityHeaders are set on every response, errors and 401s included.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if r.TLS != nil {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		next.ServeHTTP(w, r)
	})
}

// onlyReads answers 405 to anything but GET and HEAD, except a POST to
// one of writes (the answer page's button): nothing else changes state.
func onlyReads(writes map[string]bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && writes[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: the status page only reads (GET, HEAD)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cacheStatic lets browsers keep the embedded files for a while: they
// change only with the binary. Folders are not listed.
func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// writeError answers JSON {"error": ...} under /api/ and /metrics, plain text elsewhere.
func writeError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	w.Header().Del("Cache-Control")
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, code, map[string]string{"error": msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

// isNilPointer reports an interface holding a nil pointer, which is not == nil.
func isNilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return v != nil && r.Kind() == reflect.Pointer && r.IsNil()
}
