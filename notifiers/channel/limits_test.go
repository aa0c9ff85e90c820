package channel

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestCutters(t *testing.T) {
	s := strings.Repeat("é🙂", 10) // é: 1 rune/2 bytes/1 unit, 🙂: 1 rune/4 bytes/2 units
	if got := CutRunes(s, 5); utf8.RuneCountInString(got) != 5 || !strings.HasSuffix(got, "…") {
		t.Errorf("CutRunes %q", got)
	}
	if got := CutBytes(s, 11); len(got) > 11 || !utf8.ValidString(got) {
		t.Errorf("CutBytes %q (%d bytes)", got, len(got))
	}
	if got := CutUTF16(s, 7); len(utf16.Encode([]rune(got))) > 7 || !utf8.ValidString(got) {
		t.Errorf("CutUTF16 %q", got)
	}
	if CutRunes("short", 10) != "short" {
		t.Error("short string changed")
	}
}
