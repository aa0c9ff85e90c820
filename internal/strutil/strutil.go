// Package strutil holds the string helpers that several packages need, so
// each is written once.
package strutil

import "strings"

// FirstNonEmpty returns the first of ss that is not "", or "" when all are:
// the first name a disk or device has, in order of preference.
func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// FirstNonBlank returns the first of ss that holds more than white space,
// trimmed; "" when all are blank. Tool output pads fields with spaces that
// must not count as a value.
func FirstNonBlank(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}
