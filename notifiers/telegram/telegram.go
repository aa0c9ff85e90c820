// Package telegram is the Telegram channel. It calls the Bot API's
// sendMessage directly: notify's telegram service calls getMe in its
// constructor, keeps the parse mode in a package variable, and has no
// context or base URL.
package telegram

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the telegram channel type.
var Service = channel.Define[Config]("telegram")

// DefaultAPI is the Bot API used unless api_url says otherwise.
const DefaultAPI = "https://api.telegram.org"

// textMax is sendMessage's limit in UTF-16 code units after entity parsing.
const textMax = 4096

// Config is a telegram channel's own keys.
type Config struct {
	// Token is the bot token from @BotFather.
	Token config.Secret `yaml:"token"`
	// ChatIDs are chat ids (-100123…, 4242) or @channelnames.
	ChatIDs []string `yaml:"chat_ids"`
	// APIURL overrides the Bot API base, for a proxy or a local Bot API server.
	APIURL string `yaml:"api_url"`
	// AnswerUsers are the Telegram user ids (numbers) who may answer a page
	// with its buttons (Acknowledge, Snooze 24 h); none: no buttons.
	AnswerUsers []string `yaml:"answer_users"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.Need(errs, p+".token", c.Token.IsSet(), "empty: set the bot token from @BotFather (123456:ABC-...)")
	if c.Token.IsSet() && !strings.Contains(c.Token.Value, ":") {
		errs.Add(p+".token", nil, "does not look like a bot token (digits:letters) from @BotFather")
	}
	if len(c.ChatIDs) == 0 {
		errs.Add(p+".chat_ids", nil, "empty: add at least one chat id (send the bot a message, then read it from getUpdates)")
	}
	for i, id := range c.ChatIDs {
		if _, err := strconv.ParseInt(id, 10, 64); err != nil && !(strings.HasPrefix(id, "@") && len(id) > 1) {
			errs.Add(fmt.Sprintf("%s.chat_ids[%d]", p, i), id, "want a numeric chat id such as -1001234567890 or a @channelname")
		}
	}
	channel.OptionalURL(errs, p+".api_url", c.APIURL)
	for i, id := range c.AnswerUsers {
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
			errs.Add(fmt.Sprintf("%s.answer_users[%d]", p, i), id, "want a Telegram user id, a positive number such as 123456789 (the from.id of a message you sent the bot, in getUpdates)")
		}
	}
}

// HasLiteralSecret reports a bot token written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.Token.Literal }

// NewSender builds the channel's sender; unlike notify's, it asks Telegram nothing.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }
