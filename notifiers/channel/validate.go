package channel

import (
	"net/url"
	"strings"

	"github.com/zwatch/zwatch/config"
)

// Need reports problem at path unless ok.
func Need(errs *config.Errors, path string, ok bool, problem string) {
	if !ok {
		errs.Add(path, nil, "%s", problem)
	}
}

// OneOf reports v at path unless it is one of allowed.
func OneOf(errs *config.Errors, path, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	errs.Add(path, v, "must be one of %s", strings.Join(allowed, ", "))
}

// OptionalURL reports v at path unless it is empty or an http(s) URL.
func OptionalURL(errs *config.Errors, path, v string) {
	if v != "" {
		RequiredURL(errs, path, v, "an http:// or https:// URL")
	}
}

// RequiredURL reports v at path unless it is an http(s) URL; want says
// what belongs there. A bad URL is shown without its path, which may be a
// webhook's secret.
func RequiredURL(errs *config.Errors, path, v, want string) {
	if strings.TrimSpace(v) == "" {
		errs.Add(path, nil, "empty: set %s", want)
		return
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.Add(path, redactURL(v), "want %s", want)
	}
}

// redactURL keeps a URL's scheme and host for an error message; the path of
// a webhook URL is its secret.
func redactURL(v string) string {
	if u, err := url.Parse(v); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host + "/…"
	}
	if len(v) > 12 {
		return v[:12] + "…"
	}
	return v
}
