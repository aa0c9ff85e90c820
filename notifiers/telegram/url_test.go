package telegram_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

// The URL form is shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/telegram/
// (telegram://token@telegram?chats=@channel-1,chat-id-1; channels is an alias).
func TestTelegramURL(t *testing.T) {
	const bot, key = "110201543", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	tok := bot + ":" + key
	notifytest.CheckURLs(t, telegram.Service, []string{key}, []notifytest.URLCase{
		{URL: "telegram://" + tok + "@telegram?chats=@nasalerts,-1001234567890", Want: telegram.Config{Token: notifytest.Lit(tok), ChatIDs: []string{"@nasalerts", "-1001234567890"}},
			Masked: "telegram://***@telegram?chats=@nasalerts,-1001234567890"},
		{URL: "telegram://" + tok + "@Telegram/?channels=4242", Want: telegram.Config{Token: notifytest.Lit(tok), ChatIDs: []string{"4242"}},
			Masked: "telegram://***@Telegram/?channels=4242"},

		{URL: "telegram://telegram?chats=1", Err: "user: no bot token"},
		{URL: "telegram://abc:" + key + "@telegram?chats=1", Err: "user: the bot token starts with the bot's number"},
		{URL: "telegram://" + bot + "@telegram?chats=1", Err: "password: empty: the bot token goes whole before the @"},
		{URL: "telegram://" + tok + "@api.telegram.org?chats=1", Err: "host: write telegram"},
		{URL: "telegram://" + tok + "@telegram:443?chats=1", Err: "host: write telegram"},
		{URL: "telegram://" + tok + "@telegram/1234?chats=1", Err: "path: a Telegram URL has none"},
		{URL: "telegram://" + tok + "@telegram", Err: "query parameter chats: missing"},
		{URL: "telegram://" + tok + "@telegram?chats=nasalerts", Err: `query parameter chats: "nasalerts" is not a numeric chat id`},
		{URL: "telegram://" + tok + "@telegram?chats=1&parsemode=HTML", Err: "query parameter parsemode: zwatch formats each message itself"},
		{URL: "telegram://" + tok + "@telegram?chats=1&notification=no", Err: "query parameter notification: zwatch does not send silent messages"},
		{URL: "telegram://" + tok + "@telegram?chat=1", Err: `query parameter chat: not read by telegram URLs: did you mean "chats"?`},
	})
}
