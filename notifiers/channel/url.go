package channel

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/yamlcheck"
)

// URLForm is how a channel type is written as one URL, for people coming
// from shoutrrr, apprise or Scrutiny (url: ntfy://ntfy.sh/mytopic): the
// schemes that name the type and the function that reads such a URL into
// its settings. A type offers it with one method on its settings, which
// Define finds:
//
//	func (Config) URLForm() channel.URLForm[Config]
//
// A type without the method has no URL form.
type URLForm[S any] struct {
	// Schemes name the type in lower case; the first is its own and names
	// a channel that has no name.
	Schemes []string
	// Refused are query parameters other tools read that zwatch does not,
	// each with why and what to do instead.
	Refused map[string]string
	// SecretHost says the host is a credential (Pushover's user key): it is
	// masked like the user and password.
	SecretHost bool
	// Decode reads u into settings. Its error names the part of the URL
	// that is wrong (PartError); the query parameters it did not read are
	// refused after it returns.
	Decode func(u *URL) (S, error)
}

// PartError is a problem with one part of a channel URL: "scheme", "user",
// "password", "host", "port", "path", "path segment 2",
// "query parameter priority".
type PartError struct {
	Part, Problem string
}

func (e *PartError) Error() string { return e.Part + ": " + e.Problem }

// Errorf makes the PartError for part.
func Errorf(part, format string, args ...any) error {
	return &PartError{Part: part, Problem: fmt.Sprintf(format, args...)}
}

// URL is a channel URL being decoded: its parts, unescaped, and a record of
// the secrets and query parameters its decoder took, so that what it did
// not read is refused and what is secret is masked.
type URL struct {
	u       *url.URL
	src     config.Secret
	params  []param
	asked   []string
	secrets []string
}

type param struct {
	key, lower, value string
	raw               string // key=value as written
	read, passed      bool
	// canon is the first name Param was asked for it by: other names for
	// the same thing (client_id beside clientid) count as given twice.
	canon string
}

// Scheme is the URL's scheme in lower case (generic+https).
func (u *URL) Scheme() string { return u.u.Scheme }

// User is the user name before @ and the password after its colon; ok is
// false when the URL has no user part.
func (u *URL) User() (name, password string, ok bool) {
	if u.u.User == nil {
		return "", "", false
	}
	password, _ = u.u.User.Password()
	return u.u.User.Username(), password, true
}

// Host is the host name without port (an IPv6 address without brackets).
func (u *URL) Host() string { return u.u.Hostname() }

// HostPort is the host and port as written, for building a server URL.
func (u *URL) HostPort() string { return u.u.Host }

// Port is the port number, or 0 when the URL has none.
func (u *URL) Port() (int, error) {
	p := u.u.Port()
	if p == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, Errorf("port", "%q is not a port: use 1-65535", p)
	}
	return n, nil
}

// Segments are the path's segments, unescaped, without the empty ones a
// leading or trailing slash makes.
func (u *URL) Segments() []string {
	raw := strings.Trim(u.u.EscapedPath(), "/")
	if raw == "" {
		return nil
	}
	segs := strings.Split(raw, "/")
	for i, s := range segs {
		if v, err := url.PathUnescape(s); err == nil {
			segs[i] = v
		}
	}
	return segs
}

// SplitPath splits the path at its last segment: base is the path before
// it as written (escaped, "" or "/sub/path"), last the segment unescaped;
// a trailing slash does not count. n is the number of the last segment,
// for naming it in an error.
func (u *URL) SplitPath() (base, last string, n int) {
	raw := strings.Trim(u.u.EscapedPath(), "/")
	if raw == "" {
		return "", "", 0
	}
	n = strings.Count(raw, "/") + 1
	if i := strings.LastIndex(raw, "/"); i >= 0 {
		base, raw = "/"+raw[:i], raw[i+1:]
	}
	last, err := url.PathUnescape(raw)
	if err != nil {
		last = raw
	}
	return base, last, n
}

// EscapedPath is the path as written ("" or "/a/b").
func (u *URL) EscapedPath() string { return u.u.EscapedPath() }

// Param is the value of the first of names (query parameter names, matched
// in any case as shoutrrr does) that the URL has; all of them count as read.
func (u *URL) Param(names ...string) (string, bool) {
	var value string
	found := false
	for _, n := range names {
		n = strings.ToLower(n)
		u.asked = append(u.asked, n)
		for i := range u.params {
			if p := &u.params[i]; p.lower == n {
				p.read, p.canon = true, strings.ToLower(names[0])
				if !found {
					value, found = p.value, true
				}
			}
		}
	}
	return value, found
}

// Bool is a yes/no query parameter, written as shoutrrr reads them: yes, no,
// true, false, y, n, 1 or 0.
func (u *URL) Bool(names ...string) (value, set bool, err error) {
	v, ok := u.Param(names...)
	if !ok {
		return false, false, nil
	}
	switch strings.ToLower(v) {
	case "yes", "y", "true", "1":
		return true, true, nil
	case "no", "n", "false", "0":
		return false, true, nil
	}
	return false, true, Errorf("query parameter "+strings.ToLower(names[0]), "%q is not yes or no", v)
}

// QueryParam is one query parameter: its key and value unescaped, and
// key=value as written.
type QueryParam struct {
	Key, Value, Raw string
}

// Rest is every query parameter not read yet, in order; they count as read
// (a generic webhook passes them on to its target).
func (u *URL) Rest() []QueryParam {
	var out []QueryParam
	for i := range u.params {
		if p := &u.params[i]; !p.read {
			p.read, p.passed = true, true
			out = append(out, QueryParam{Key: p.key, Value: p.value, Raw: p.raw})
		}
	}
	return out
}

// Secret is v, a credential taken from the URL: it is masked wherever the
// URL is shown, and prints as the URL's secret does (from ${ENV}, file:).
func (u *URL) Secret(v string) config.Secret {
	if v != "" {
		u.secrets = append(u.secrets, v)
	}
	return u.src.Part(v)
}

// decodeURL reads src, a channel URL, with form; see config.ChannelURLType.
func decodeURL[S Settings](form URLForm[S], src config.Secret, path string, errs *config.Errors) (config.ChannelSettings, string) {
	raw := strings.TrimSpace(src.Value)
	u, err := parseURL(raw, src)
	if err != nil {
		scheme, _, _ := strings.Cut(raw, "://")
		errs.Add(path, strings.ToLower(scheme)+"://…", "%s", err)
		return nil, ""
	}
	var refused []string
	for i := range u.params {
		p := &u.params[i]
		if why, ok := form.Refused[p.lower]; ok {
			refused = append(refused, "query parameter "+p.key+": "+why)
			p.read = true
		}
	}
	s, err := form.Decode(u)
	short := u.mask(form.SecretHost, false)
	if len(refused) > 0 {
		// Decoded all the same to learn which parts are secret (an API
		// key written as the host).
		for _, r := range refused {
			errs.Add(path, short, "%s", r)
		}
		return nil, ""
	}
	if err != nil {
		errs.Add(path, short, "%s", err)
		// A misspelt parameter is often why a required one is missing.
		for _, p := range u.params {
			if hint := yamlcheck.Suggest(p.lower, u.asked); !p.read && hint != "" {
				errs.Add(path, short, "query parameter %s: not read by %s URLs%s", p.key, form.Schemes[0], hint)
			}
		}
		return nil, ""
	}
	bad, seen := false, map[string]string{}
	for _, p := range u.params {
		canon := p.lower
		if p.canon != "" {
			canon = p.canon
		}
		first, twice := seen[canon]
		switch {
		case !p.read:
			takes := "no query parameters"
			if len(u.asked) > 0 {
				takes = strings.Join(slices.Compact(slices.Sorted(slices.Values(u.asked))), ", ")
			}
			errs.Add(path, short, "query parameter %s: not read by %s URLs%s (they take %s)", p.key, form.Schemes[0],
				yamlcheck.Suggest(p.lower, u.asked), takes)
			bad = true
		case !p.passed && twice && strings.EqualFold(first, p.key):
			errs.Add(path, short, "query parameter %s: given twice: keep one", p.key)
			bad = true
		case !p.passed && twice:
			errs.Add(path, short, "query parameter %s: given twice, also as %s: keep one", p.key, first)
			bad = true
		}
		if !twice {
			seen[canon] = p.key
		}
	}
	if bad {
		return nil, ""
	}
	return s, u.mask(form.SecretHost, true)
}

// parseURL parses raw without ever quoting it: net/url's errors repeat the
// URL, secrets and all.
func parseURL(raw string, src config.Secret) (*URL, error) {
	if strings.Contains(raw, "#") {
		return nil, Errorf("fragment", "a # ends the URL: write a # inside a token, password or topic as %%23")
	}
	pu, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		msg := err.Error()
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		switch {
		case strings.Contains(msg, "invalid port"):
			return nil, Errorf("port", "not a number after the host's colon: a user:password ends with @ and the host, and a / inside it is written %%2F")
		case strings.Contains(msg, "invalid userinfo"):
			return nil, Errorf("user", "has a character that must be escaped: write / as %%2F, ? as %%3F, : in the user as %%3A")
		case strings.Contains(msg, "invalid URL escape"):
			return nil, Errorf("url", "has a %% not followed by two hex digits: write a %% itself as %%25")
		case strings.Contains(msg, "control character"):
			return nil, Errorf("url", "has a control character (a line break or a tab?)")
		case strings.Contains(msg, "host"):
			return nil, Errorf("host", "is not a host name, IP address or [IPv6] address")
		}
		return nil, Errorf("url", "is not a valid URL")
	}
	u := &URL{u: pu, src: src}
	if pu.RawQuery != "" {
		for _, kv := range strings.Split(pu.RawQuery, "&") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			key, err1 := url.QueryUnescape(k)
			value, err2 := url.QueryUnescape(v)
			if err1 != nil || err2 != nil || key == "" {
				return nil, Errorf("query", "a parameter is not key=value with valid %% escapes")
			}
			u.params = append(u.params, param{key: key, lower: strings.ToLower(key), value: value, raw: kv})
		}
	}
	return u, nil
}

// mask shows the URL with its user part, the secrets its decoder took and,
// when secretHost, its host replaced by ***. Without full, the path and
// query are left out (an error may come before the decoder took them).
func (u *URL) mask(secretHost, full bool) string {
	// A part is masked when it is a secret or holds a long one; a short
	// password found inside a host name is a coincidence.
	secret := func(v string) bool {
		for _, s := range u.secrets {
			if v == s || len(s) >= 8 && strings.Contains(v, s) {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	b.WriteString(u.u.Scheme + "://")
	if u.u.User != nil {
		b.WriteString("***@")
	}
	if host := u.u.Hostname(); host != "" && (secretHost || secret(host)) {
		b.WriteString("***")
		if p := u.u.Port(); p != "" {
			b.WriteString(":" + p)
		}
	} else {
		b.WriteString(u.u.Host)
	}
	if !full {
		if strings.Trim(u.u.EscapedPath(), "/") != "" || u.u.RawQuery != "" {
			b.WriteString("/…")
		}
		return u.scrub(b.String())
	}
	segs := strings.Split(u.u.EscapedPath(), "/")
	for i, s := range segs {
		if v, err := url.PathUnescape(s); err == nil && s != "" && secret(v) {
			segs[i] = "***"
		}
	}
	b.WriteString(strings.Join(segs, "/"))
	if len(u.params) > 0 {
		q := make([]string, len(u.params))
		for i, p := range u.params {
			q[i] = p.raw
			if secret(p.value) {
				k, _, _ := strings.Cut(p.raw, "=")
				q[i] = k + "=***"
			}
		}
		b.WriteString("?" + strings.Join(q, "&"))
	}
	return u.scrub(b.String())
}

// scrub masks what is left of a long secret that spans parts of the URL
// (a token written again across path segments).
func (u *URL) scrub(s string) string {
	for _, sec := range u.secrets {
		if len(sec) >= 8 {
			for _, form := range []string{sec, url.PathEscape(sec), url.QueryEscape(sec)} {
				s = strings.ReplaceAll(s, form, "***")
			}
		}
	}
	return s
}
