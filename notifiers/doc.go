// Package notifiers is the registry of zwatch's notification channels:
// building them from the config, rendering a notification for people,
// routing (Channel.Select), test sends and the inventory feed. Each channel
// type — email, Pushover, Telegram, ntfy, Gotify, Discord, Slack,
// Mattermost, Teams, Matrix, a generic webhook, a program (exec) — is a
// folder of its own beside this one, built on package channel and listed in
// Services. Getting notifications to them (the outbox, direct delivery,
// dead letters, storage failures) is package delivery's. See
// docs/notifications.md for the configuration and delivery guarantees.
package notifiers
