package answer

import (
	"testing"
	"time"
)

func TestVerbs(t *testing.T) {
	for emoji, want := range map[string]string{"✅": Ack, "✅\ufe0f": Ack, "✔\ufe0f": Ack, "👍": Ack, "💤": Snooze, "❤️": "", "": ""} {
		if got := VerbOfReaction(emoji); got != want {
			t.Errorf("VerbOfReaction(%q) = %q, want %q", emoji, got, want)
		}
	}
	for text, want := range map[string][2]string{
		"ack": {Ack, ""}, " Acknowledge ": {Ack, ""}, "ACK 3f2a9c1e": {Ack, "3f2a9c1e"}, "snooze 24h": {Snooze, "24h"},
		"acked it": {"", ""}, "on my way": {"", ""}, "": {"", ""},
	} {
		if verb, rest := VerbOfWord(text); verb != want[0] || rest != want[1] {
			t.Errorf("VerbOfWord(%q) = %q %q, want %q %q", text, verb, rest, want[0], want[1])
		}
	}
	if RetryWait(1) != 2*time.Second || RetryWait(8) != 256*time.Second || RetryWait(50) != 5*time.Minute {
		t.Errorf("RetryWait: %v %v %v", RetryWait(1), RetryWait(8), RetryWait(50))
	}
}
