package config

import (
	"strings"
	"testing"
)

func TestPublicURL(t *testing.T) {
	users := "  users: [{name: admin, password_hash: '$2a$10$abcdefghijklmnopqrstuuabcdefghijklmnopqrstuvwxyzABCDE'}]\n"
	parse := func(http string) (*Loaded, error) {
		return Parse(strings.NewReader("host: nas1\nhttp:\n"+http), notifyCatalog)
	}
	l, err := parse("  listen: 127.0.0.1:8931\n  public_url: https://nas.example.net:8931/\n" + users)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config.HTTP.AnswerURL(); got != "https://nas.example.net:8931/answer" {
		t.Errorf("AnswerURL %q", got)
	}
	for _, c := range []struct{ http, want string }{
		{"  public_url: https://nas.example.net/\n", "puts answer links into notifications, and the page acts on them for a logged-in user only: add http.users"},
		{"  public_url: nas.example.net\n" + users, `http.public_url = "nas.example.net": want the page's address`},
		{"  public_url: https://admin:pw@nas.example.net/\n" + users, "no user or password in it"},
		{"  public_url: https://nas.example.net/?x=1\n" + users, "must not carry a query or fragment"},
		{"  listen: \"\"\n  public_url: https://nas.example.net/\n", "needs the page: set http.listen"},
	} {
		_, err := parse(c.http)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s  got  %v\n  want %q", c.http, err, c.want)
		}
	}
	var none HTTPConfig
	if none.AnswerURL() != "" {
		t.Error("AnswerURL without public_url")
	}
}
