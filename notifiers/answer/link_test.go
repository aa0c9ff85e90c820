package answer

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var testKey = Key([]byte("0123456789abcdef0123456789abcdef"))

func TestLinkRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 7, 3, 10, 0, 0, time.UTC)
	l, err := NewLink(Action{Verb: Ack, Incident: "3f2a9c1e"}, "nas1.example.net", now)
	if err != nil {
		t.Fatal(err)
	}
	tok := testKey.SignLink(l)
	if strings.ContainsAny(tok, " /?&#%+=") || len(tok) > maxLink {
		t.Errorf("token %q is not URL-safe or too long", tok)
	}
	got, err := testKey.VerifyLink(tok, now.Add(time.Hour))
	if err != nil || got != l {
		t.Fatalf("VerifyLink = %+v, %v; want %+v", got, err, l)
	}
	if _, err := testKey.VerifyLink(tok, now.Add(LinkFor)); !errors.Is(err, ErrLinkExpired) {
		t.Errorf("at its expiry: %v, want ErrLinkExpired", err)
	}
	other := Key([]byte("fedcba9876543210fedcba9876543210"))
	if _, err := other.VerifyLink(tok, now); !errors.Is(err, ErrLinkBad) {
		t.Errorf("another install's key: %v, want ErrLinkBad", err)
	}
	// Each field changed, in turn, breaks the signature.
	f := strings.Split(tok, ".")
	for i, swap := range []string{"zw1", Snooze, "00000000", "bmFzMg", "9999999999", strings.Repeat("0", 24)} {
		g := append([]string(nil), f...)
		g[i] = swap
		if _, err := testKey.VerifyLink(strings.Join(g, "."), now); !errors.Is(err, ErrLinkBad) {
			t.Errorf("field %d changed to %q: %v, want ErrLinkBad", i, swap, err)
		}
	}
	a, b := testKey.FormToken(tok), testKey.FormToken(tok+"x")
	if !testKey.CheckFormToken(tok, a) || testKey.CheckFormToken(tok, b) || testKey.CheckFormToken(tok, "") {
		t.Error("form tokens do not tell their link")
	}
	l2, _ := NewLink(Action{Verb: Ack, Incident: "3f2a9c1e"}, "nas1", now)
	if l2.Nonce == l.Nonce {
		t.Error("two links share a nonce")
	}
}

func FuzzVerifyLink(f *testing.F) {
	now := time.Date(2026, 12, 7, 3, 10, 0, 0, time.UTC)
	l, _ := NewLink(Action{Verb: Snooze, Incident: "3f2a9c1e"}, "nas1", now)
	f.Add(testKey.SignLink(l))
	f.Add("zw2.ack.3f2a9c1e.bmFzMQ.1796612400.000000000000000000000000.AAAAAAAAAAAAAAAA")
	f.Add("")
	f.Add(strings.Repeat(".", 600))
	f.Fuzz(func(t *testing.T, tok string) {
		got, err := testKey.VerifyLink(tok, now)
		if err == nil && testKey.SignLink(got) != tok {
			t.Errorf("%q accepted but is not the token of %+v", tok, got)
		}
	})
}
