package replace

import "strings"

// ShellQuote makes s one word for a POSIX shell. Strings made only of
// characters no shell treats specially are left bare so the common case
// (by-id names, pool names) reads naturally; anything else is single-quoted,
// the only quoting in which nothing ($, `, \, newline) is special, with each
// embedded ' written as '\”.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if isShellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isShellSafe reports whether every byte of s is one a shell leaves alone
// in an argument. '=' and ':' are safe outside the command position, which
// is the only place quoted names are put.
func isShellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("@%+=:,./_-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ShellCommand renders argv as one copy/paste-safe shell command line.
func ShellCommand(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}
