package telegram_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

// The account a fleet reads once (its lease key) is the bot: the same
// through any api_url, another for another token, and never the token.
func TestTelegramAnswerAccount(t *testing.T) {
	account := func(api, token string) string {
		var s channel.Sender = telegram.New(telegram.Config{APIURL: api, Token: config.Secret{Value: token}, ChatIDs: []string{"42"}},
			channel.Env{HTTP: http.DefaultClient})
		return s.(channel.SharedAnswers).AnswerAccount()
	}
	a := account("", "123456:ABC-DEF")
	if b := account("http://127.0.0.1:8081", "123456:ABC-DEF"); b != a {
		t.Errorf("one bot through another api_url: %s, %s", a, b)
	}
	if c := account("", "654321:XYZ"); c == a {
		t.Error("two bots, one account")
	}
	if strings.Contains(a, "123456") || strings.Contains(a, "ABC") || len(a) != 32 {
		t.Errorf("account %q: want 32 hex digits of a digest", a)
	}
}
