package notifiers

import (
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/discord"
	"github.com/zwatch/zwatch/notifiers/email"
	"github.com/zwatch/zwatch/notifiers/exec"
	"github.com/zwatch/zwatch/notifiers/gotify"
	"github.com/zwatch/zwatch/notifiers/matrix"
	"github.com/zwatch/zwatch/notifiers/mattermost"
	"github.com/zwatch/zwatch/notifiers/mqtt"
	"github.com/zwatch/zwatch/notifiers/ntfy"
	"github.com/zwatch/zwatch/notifiers/opsgenie"
	"github.com/zwatch/zwatch/notifiers/pagerduty"
	"github.com/zwatch/zwatch/notifiers/pushover"
	"github.com/zwatch/zwatch/notifiers/signal"
	"github.com/zwatch/zwatch/notifiers/slack"
	"github.com/zwatch/zwatch/notifiers/teams"
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
		mattermost.Service,
		teams.Service,
		matrix.Service,
		webhook.Service,
		exec.Service,
		mqtt.Service,
		signal.Service,
		pagerduty.Service,
		opsgenie.Service,
	}
}

// WebhookPayload is the JSON body the webhook channel posts.
type WebhookPayload = webhook.Payload
