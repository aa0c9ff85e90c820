package notifiers

import (
	"strings"
	"unicode/utf8"

	"github.com/zwatch/zwatch/alert"
)

// Service limits. Each service refuses (or silently cuts) longer text, so
// the cut is made here where it can keep the first line intact.
const (
	pushoverTitleMax   = 250   // characters
	pushoverMessageMax = 1024  // characters
	telegramTextMax    = 4096  // UTF-16 code units after entity parsing
	discordContentMax  = 2000  // characters
	slackTextMax       = 40000 // characters; Slack truncates beyond
	ntfyMessageMax     = 4096  // bytes; larger bodies become attachments
	gotifyMessageMax   = 65000 // bytes; no documented limit, stay sane
	webhookTextMax     = 1 << 20
)

const ellipsis = "…"

// cutRunes shortens s to at most max characters, ending in an ellipsis.
func cutRunes(s string, max int) string {
	return cut(s, max, func(rune) int { return 1 })
}

// cutUTF16 counts as Telegram does: characters outside the BMP take two units.
func cutUTF16(s string, max int) string {
	return cut(s, max, func(r rune) int {
		if r >= 0x10000 {
			return 2
		}
		return 1
	})
}

// cutBytes shortens s to at most max UTF-8 bytes without splitting a rune.
func cutBytes(s string, max int) string {
	return cut(s, max, func(r rune) int { return utf8.RuneLen(r) })
}

func cut(s string, max int, size func(rune) int) string {
	total := 0
	for _, r := range s {
		total += size(r)
	}
	if total <= max {
		return s
	}
	budget := max
	for _, r := range ellipsis {
		budget -= size(r)
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		n := size(r)
		if used+n > budget {
			break
		}
		b.WriteRune(r)
		used += n
	}
	return strings.TrimRight(b.String(), " \n\t") + ellipsis
}

// body is the text after the first line, for services that show Summary in
// a title field of their own.
func body(m Message) string {
	if i := strings.IndexByte(m.Text, '\n'); i >= 0 {
		return strings.TrimLeft(m.Text[i+1:], "\n")
	}
	return ""
}

// pushoverPriority: 1 (high, bypasses quiet hours) for critical, quiet for
// resolved notices and info, normal otherwise. Emergency (2) needs an
// acknowledgement workflow zwatch does not run.
func pushoverPriority(m Message) int {
	switch {
	case m.Resolved, m.Severity == alert.Info:
		return -1
	case m.Severity == alert.Critical:
		return 1
	}
	return 0
}

// ntfyPriority: 5 (urgent: long vibration, pop-over) for critical.
func ntfyPriority(m Message) int {
	switch {
	case m.Resolved:
		return 2
	case m.Severity == alert.Critical:
		return 5
	case m.Severity == alert.Warning:
		return 4
	}
	return 3
}

func ntfyTags(m Message) []string {
	switch {
	case m.Resolved:
		return []string{"white_check_mark", "zwatch"}
	case m.Severity == alert.Critical:
		return []string{"rotating_light", "zwatch"}
	case m.Severity == alert.Warning:
		return []string{"warning", "zwatch"}
	}
	return []string{"information_source", "zwatch"}
}

// gotifyPriority: the Android app pops up at 8 and above, makes a sound at 4-7.
func gotifyPriority(m Message) int {
	switch {
	case m.Resolved:
		return 2
	case m.Severity == alert.Critical:
		return 8
	case m.Severity == alert.Warning:
		return 5
	}
	return 2
}

// silent reports whether a phone should stay quiet for m.
func silent(m Message) bool { return m.Resolved || m.Severity == alert.Info }
