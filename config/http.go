package config

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// DefaultHTTPListen is where the status page and /metrics listen unless the
// config says otherwise: loopback, on a port below the 9100-9999 range the
// Prometheus default port allocations list has given out to exporters
// (docs/metrics.md).
const DefaultHTTPListen = "127.0.0.1:8931"

// HTTPConfig is the status page, its JSON API and Prometheus /metrics, all on
// one listener that `zwatch run` serves.
type HTTPConfig struct {
	// Listen is host:port; "" turns the listener off.
	Listen string `yaml:"listen"`
	// TLS is the listener's PEM certificate and key.
	TLS ListenTLSConfig `yaml:"tls"`
	// Insecure allows a listener other machines reach without TLS (and,
	// without users, without a password): an explicit choice, never a default.
	Insecure bool `yaml:"insecure"`
	// Users may read the page, the API and /metrics with HTTP basic auth;
	// with none, nothing asks for a password.
	Users []HTTPUser `yaml:"users"`
	// PublicURL is the page as the owner's phone or mail client reaches it
	// (https://nas.example.net:8931/, a VPN address). When set,
	// notifications carry signed, single-use links to answer them on the
	// page, which acts for a logged-in user only.
	PublicURL string `yaml:"public_url"`
	// Pprof serves Go's runtime profiles (heap, goroutines, CPU) under
	// /debug/pprof/, behind the same login; only on a loopback listener,
	// for finding where memory or CPU goes (docs/benchmarks.md, "Soak").
	Pprof bool `yaml:"pprof"`
}

// HTTPUser is one basic-auth login. PasswordHash is a bcrypt hash (`zwatch
// hash-password`, or `htpasswd -nbB`), never the password itself.
type HTTPUser struct {
	Name         string `yaml:"name"`
	PasswordHash Secret `yaml:"password_hash"`
}

// Loopback reports whether the listener only accepts this machine's clients.
func (h HTTPConfig) Loopback() bool {
	host, _, err := net.SplitHostPort(h.Listen)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

func (h *HTTPConfig) validate(errs *Errors) {
	hasTLS := h.TLS.Cert != "" || h.TLS.Key != ""
	if (h.TLS.Cert == "") != (h.TLS.Key == "") {
		errs.add("http.tls", nil, "cert and key go together: set both or neither")
	}
	for i, u := range h.Users {
		path := fmt.Sprintf("http.users[%d]", i)
		if u.Name == "" {
			errs.add(path+".name", nil, "empty: name the login")
		}
		if _, err := bcrypt.Cost([]byte(u.PasswordHash.Value)); err != nil {
			errs.add(path+".password_hash", nil, "is not a bcrypt hash ($2a$, $2b$ or $2y$...): make one with `zwatch hash-password` or `htpasswd -nbB NAME`, and never write the password itself")
		}
	}
	h.validatePublicURL(errs)
	if h.Pprof && !h.Loopback() {
		errs.add("http.pprof", true, "needs a loopback http.listen such as %s: profiles show the daemon's memory, secrets included, so they are never served to other machines", DefaultHTTPListen)
	}
	if h.Listen == "" {
		if hasTLS || len(h.Users) > 0 {
			errs.add("http.listen", nil, "is \"\" (off), so http.tls and http.users have no effect: set http.listen, or remove them")
		}
		return
	}
	host, port, err := net.SplitHostPort(h.Listen)
	if err != nil || port == "" {
		errs.add("http.listen", h.Listen, "want host:port such as %s, or \"\" to turn the status page and /metrics off", DefaultHTTPListen)
		return
	}
	if h.TLS.Cert != "" && h.TLS.Key != "" {
		if _, err := tls.LoadX509KeyPair(h.TLS.Cert, h.TLS.Key); err != nil {
			errs.add("http.tls", nil, "cert %s and key %s do not load as a PEM certificate and its key: %v", h.TLS.Cert, h.TLS.Key, err)
		}
	}
	if h.Loopback() || h.Insecure {
		return
	}
	if host == "" {
		host = "every address"
	}
	switch {
	case !hasTLS:
		errs.add("http.listen", h.Listen, "reaches other machines (%s), so it needs TLS and a login: set http.tls.cert, http.tls.key and http.users; or listen on 127.0.0.1; or, on a network you trust, set http.insecure: true", host)
	case len(h.Users) == 0:
		errs.add("http.users", nil, "none, but http.listen %s reaches other machines: add a login (name and bcrypt password_hash), or set http.insecure: true to let anyone who reaches it read the page", h.Listen)
	}
}

// validatePublicURL: an absolute http(s) URL of this listener's page, which
// needs a login to act on an answer link.
func (h *HTTPConfig) validatePublicURL(errs *Errors) {
	if h.PublicURL == "" {
		return
	}
	u, err := url.Parse(h.PublicURL)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil:
		errs.add("http.public_url", h.PublicURL, "want the page's address as your phone reaches it, such as https://nas.example.net:8931/ (no user or password in it)")
	case u.RawQuery != "" || u.Fragment != "":
		errs.add("http.public_url", h.PublicURL, "must not carry a query or fragment: the links add their own")
	case h.Listen == "":
		errs.add("http.public_url", h.PublicURL, "needs the page: set http.listen, or remove public_url")
	case len(h.Users) == 0:
		errs.add("http.public_url", h.PublicURL, "puts answer links into notifications, and the page acts on them for a logged-in user only: add http.users (zwatch hash-password)")
	}
}

// AnswerURL is the page's answer endpoint under PublicURL, "" without one.
func (h HTTPConfig) AnswerURL() string {
	if h.PublicURL == "" {
		return ""
	}
	return strings.TrimRight(h.PublicURL, "/") + "/answer"
}

// HistoryConfig keeps what a person wants to look back on (disk SMART
// attributes, pool capacity, vdev errors, scrubs, alerts) in JetStream.
type HistoryConfig struct {
	Enabled bool `yaml:"enabled"`
	// RawInterval: at most one raw point per disk or pool this often.
	RawInterval Duration `yaml:"raw_interval"`
	// RawFor, HourlyFor and MaxAge are how long raw points, hourly and
	// daily aggregates are kept (events: MaxAge).
	RawFor    Duration `yaml:"raw_for"`
	HourlyFor Duration `yaml:"hourly_for"`
	MaxAge    Duration `yaml:"max_age"`
	// MaxMB bounds each history stream on disk, whatever the fleet sends.
	MaxMB int `yaml:"max_mb"`
}

// DefaultHistory is what the history keeps unless the config says otherwise.
func DefaultHistory() HistoryConfig {
	return HistoryConfig{
		Enabled:     true,
		RawInterval: Duration(5 * time.Minute),
		RawFor:      Duration(7 * 24 * time.Hour),
		HourlyFor:   Duration(30 * 24 * time.Hour),
		MaxAge:      Duration(400 * 24 * time.Hour),
		MaxMB:       16,
	}
}

func (h *HistoryConfig) validate(errs *Errors) {
	if !h.Enabled {
		return
	}
	positive(errs, "history.raw_interval", h.RawInterval, time.Minute)
	if h.RawInterval.D() > time.Hour {
		errs.add("history.raw_interval", FormatDuration(h.RawInterval.D()), "too long: at most 1h, or hourly aggregates would be empty")
	}
	positive(errs, "history.raw_for", h.RawFor, 24*time.Hour)
	if h.HourlyFor.D() < h.RawFor.D() {
		errs.add("history.hourly_for", FormatDuration(h.HourlyFor.D()), "shorter than history.raw_for (%s): hourly aggregates must cover at least the raw points' time", FormatDuration(h.RawFor.D()))
	}
	if h.MaxAge.D() < h.HourlyFor.D() {
		errs.add("history.max_age", FormatDuration(h.MaxAge.D()), "shorter than history.hourly_for (%s): daily aggregates must outlast the hourly ones", FormatDuration(h.HourlyFor.D()))
	}
	if h.MaxAge.D() > 10*365*24*time.Hour {
		errs.add("history.max_age", FormatDuration(h.MaxAge.D()), "too long: at most 3650d")
	}
	if h.MaxMB < 1 || h.MaxMB > 1<<16 {
		errs.add("history.max_mb", h.MaxMB, "must be 1 to 65536 (MiB per history stream); 12 disks and 3 pools hold about 8 in all after a year")
	}
}
