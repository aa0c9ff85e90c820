package channel

import (
	"strings"
	"unicode/utf8"
)

// Services refuse (or silently cut) text over their limits, so the cut is
// made here where it can keep the first line intact and end in an ellipsis.

const ellipsis = "…"

// CutRunes shortens s to at most max characters, ending in an ellipsis.
func CutRunes(s string, max int) string {
	return cut(s, max, func(rune) int { return 1 })
}

// CutUTF16 counts as Telegram does: characters outside the BMP take two units.
func CutUTF16(s string, max int) string {
	return cut(s, max, func(r rune) int {
		if r >= 0x10000 {
			return 2
		}
		return 1
	})
}

// CutBytes shortens s to at most max UTF-8 bytes without splitting a rune.
func CutBytes(s string, max int) string {
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

// OneLine folds all white space, newlines included, into single spaces.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
