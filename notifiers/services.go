package notifiers

import (
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/discord"
	"github.com/zwatch/zwatch/notifiers/email"
	"github.com/zwatch/zwatch/notifiers/gotify"
	"github.com/zwatch/zwatch/notifiers/ntfy"
	"github.com/zwatch/zwatch/notifiers/pushover"
	"github.com/zwatch/zwatch/notifiers/slack"
	"github.com/zwatch/zwatch/notifiers/telegram"
	"github.com/zwatch/zwatch/notifiers/webhook"
)

// Services are the channel types zwatch ships, in the order the docs
// present them. Each is one folder; adding a channel type is a folder and a
// line here. package catalog hands them to config.
func Services() []channel.Service {
	return []channel.Service{
		email.Service,
		pushover.Service,
		telegram.Service,
		ntfy.Service,
		gotify.Service,
		discord.Service,
		slack.Service,
		webhook.Service,
	}
}

// WebhookPayload is the JSON body the webhook channel posts.
type WebhookPayload = webhook.Payload
