// Package notifiers delivers zwatch notifications to people: email (go-mail),
// Pushover, Telegram, ntfy, Gotify, Discord, Slack and a generic webhook,
// each a nikoksr/notify Notifier, fed from the durable JetStream outbox with
// one durable consumer and one goroutine per channel. See
// docs/notifications.md for the configuration and delivery guarantees.
package notifiers
