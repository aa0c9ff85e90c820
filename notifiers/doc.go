// Package notifiers delivers zwatch notifications to people, fed from the
// durable JetStream outbox with one durable consumer and one goroutine per
// channel. Each channel type — email, Pushover, Telegram, ntfy, Gotify,
// Discord, Slack, Mattermost, Teams, Matrix, a generic webhook, a program
// (exec) — is a folder of its own beside this one, built on package
// channel and listed in Services. See
// docs/notifications.md for the configuration and delivery guarantees.
package notifiers
