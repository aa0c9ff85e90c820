package telegram

import (
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's Telegram URL
// (https://containrrr.dev/shoutrrr/v0.8/services/telegram/):
//
//	telegram://123456:ABC-DEF…@telegram?chats=@mychannel,-1001234567890
//
// The bot token is the user part (the colon inside it splits it into user
// and password); channels is shoutrrr's other name for chats. apprise's
// tgram://TOKEN/CHAT is not read.
func (Config) URLForm() channel.URLForm[Config] {
	const presentation = "zwatch formats each message itself: remove it"
	return channel.URLForm[Config]{
		Schemes: []string{"telegram"},
		Refused: map[string]string{
			"title": "zwatch titles each message with its alert: remove it", "parsemode": presentation, "preview": presentation,
			"notification": "zwatch does not send silent messages: remove it (use min_severity to send fewer)",
		},
		Decode: fromURL,
	}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	bot, secret, ok := u.User()
	if secret != "" {
		c.Token = u.Secret(bot + ":" + secret)
	}
	switch {
	case !ok || bot == "" && secret == "":
		return c, channel.Errorf("user", "no bot token: write telegram://123456:ABC-DEF…@telegram?chats=…, the token from @BotFather")
	case strings.Trim(bot, "0123456789") != "" || bot == "":
		return c, channel.Errorf("user", "the bot token starts with the bot's number and a colon (123456:ABC-DEF…)")
	case secret == "":
		return c, channel.Errorf("password", "empty: the bot token goes whole before the @, 123456:ABC-DEF…@telegram")
	case !strings.EqualFold(u.HostPort(), "telegram"):
		return c, channel.Errorf("host", "write telegram, as in telegram://TOKEN@telegram?chats=… (zwatch calls api.telegram.org)")
	case len(u.Segments()) > 0:
		return c, channel.Errorf("path", "a Telegram URL has none: name the chats in the query, ?chats=@mychannel,-1001234567890")
	}
	v, _ := u.Param("chats", "channels")
	if strings.TrimSpace(v) == "" {
		return c, channel.Errorf("query parameter chats", "missing: name at least one chat id or @channel, ?chats=@mychannel,-1001234567890")
	}
	for _, id := range strings.Split(v, ",") {
		id = strings.TrimSpace(id)
		if _, err := strconv.ParseInt(id, 10, 64); err != nil && !(strings.HasPrefix(id, "@") && len(id) > 1) {
			return c, channel.Errorf("query parameter chats", "%q is not a numeric chat id such as -1001234567890 or a @channelname", id)
		}
		c.ChatIDs = append(c.ChatIDs, id)
	}
	return c, nil
}
