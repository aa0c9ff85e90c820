package answer

import (
	"strings"
	"time"
)

// What the channels that read answers share: the answers a page offers,
// the words and reactions that give them, and how long a reader waits
// after its service failed.

// Choice is one answer a page offers: its verb and what people see.
type Choice struct{ Verb, Label string }

// Choices are the answers a page offers, in order.
func Choices() []Choice {
	return []Choice{{Ack, "Acknowledge"}, {Snooze, "Snooze 24 h"}}
}

// VerbOfReaction is the answer a reaction gives: ✅ ✔ 👍 acknowledge, 💤
// snoozes (with or without the emoji variation selector); "" for any other.
func VerbOfReaction(emoji string) string {
	switch strings.TrimRight(emoji, "\ufe0f") {
	case "✅", "✔", "👍":
		return Ack
	case "💤":
		return Snooze
	}
	return ""
}

// VerbOfWord is the answer a reply's first word gives ("ack",
// "acknowledge", "snooze", any case), and the rest of the reply; "" when
// the reply is no answer.
func VerbOfWord(text string) (verb, rest string) {
	first, rest, _ := strings.Cut(strings.ToLower(strings.TrimSpace(text)), " ")
	switch first {
	case "ack", "acknowledge":
		return Ack, strings.TrimSpace(rest)
	case "snooze":
		return Snooze, strings.TrimSpace(rest)
	}
	return "", ""
}

// RetryWait is how long a reader of answers waits after its service
// failed failures times in a row: doubling from 2 s, at most 5 min.
func RetryWait(failures int) time.Duration {
	return min(time.Duration(1<<min(failures, 9))*time.Second, 5*time.Minute)
}
