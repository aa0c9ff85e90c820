package notifiers

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/nikoksr/notify"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/config"
)

// Channel is one configured destination: a notify.Notifier plus the filter
// that decides which alerts reach it.
type Channel struct {
	Name         string
	Type         string
	MinSeverity  alert.Severity
	SendResolved bool
	Pools        []string
	Alerts       []string
	// Notifier delivers; it reads the full Message from the context (see
	// Send) and falls back to subject and body when called by other code.
	Notifier notify.Notifier

	cfg config.ChannelConfig
}

// TypeConsole is the always-available channel that writes to zwatch's log.
const TypeConsole = "console"

// Build turns the config into channels, without the console channel (Run
// adds it, since it needs the logger).
func Build(cfg config.NotifyConfig) ([]Channel, error) {
	var out []Channel
	var errs []error
	timeout := cfg.SendTimeout.D()
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	for i, cc := range cfg.Channels {
		sev, ok := alert.ParseSeverity(cc.Severity())
		if !ok {
			errs = append(errs, fmt.Errorf("notify.channels[%d].min_severity: %q is not info, warning or critical", i, cc.MinSeverity))
			continue
		}
		n, err := newNotifier(cc, timeout)
		if err != nil {
			errs = append(errs, fmt.Errorf("notify.channels[%d] (%s): %w", i, cc.Name, err))
			continue
		}
		out = append(out, Channel{
			Name: cc.Name, Type: cc.Type, MinSeverity: sev, SendResolved: cc.Resolved(),
			Pools: cc.Route.Pools, Alerts: cc.Route.Alerts, Notifier: n, cfg: cc,
		})
	}
	return out, errors.Join(errs...)
}

func newNotifier(cc config.ChannelConfig, timeout time.Duration) (notify.Notifier, error) {
	// One client per channel: no shared state between channels, and a
	// timeout even if a caller forgets the context deadline.
	hc := &http.Client{Timeout: timeout}
	switch cc.Type {
	case config.ChannelEmail:
		return newEmail(cc, timeout)
	case config.ChannelPushover:
		return newPushover(cc, hc), nil
	case config.ChannelTelegram:
		return newTelegram(cc, hc), nil
	case config.ChannelNtfy:
		return newNtfy(cc, hc), nil
	case config.ChannelGotify:
		return newGotify(cc, hc), nil
	case config.ChannelDiscord:
		return newDiscord(cc, hc), nil
	case config.ChannelSlack:
		return newSlack(cc, hc), nil
	case config.ChannelWebhook:
		return newWebhook(cc, hc), nil
	}
	return nil, fmt.Errorf("type %q is not supported", cc.Type)
}

// Send delivers m through the channel's notifier by way of notify.Notify.
func (c *Channel) Send(ctx context.Context, m Message) error {
	if c.Notifier == nil {
		return fmt.Errorf("channel %s has no notifier", c.Name)
	}
	err := notify.NewWithServices(c.Notifier).Send(withMessage(ctx, m), m.Summary, m.Text)
	if err != nil {
		// notify joins its own sentinel in; the service's error is the news.
		return fmt.Errorf("%s %s: %w", c.Type, c.Name, unjoin(err))
	}
	return nil
}

func unjoin(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != notify.ErrSendNotification {
				return e
			}
		}
	}
	return err
}

// Select returns the part of n this channel should receive, and false when
// nothing is left: alerts below its severity, outside its route, resolved
// notices it does not want, and reports about its own failures are dropped.
func (c *Channel) Select(n alert.Notification) (alert.Notification, bool) {
	var keep []alert.Alert
	for _, a := range n.Alerts {
		if a.Severity.Rank() < c.MinSeverity.Rank() {
			continue
		}
		if a.State == alert.Resolved && !c.SendResolved {
			continue
		}
		if a.Name == DeadLetterAlert && a.Labels["channel"] == c.Name {
			continue
		}
		if !c.routes(a) {
			continue
		}
		keep = append(keep, a)
	}
	if len(keep) == 0 {
		return n, false
	}
	out := n
	out.Alerts = keep
	out.Status = alert.Resolved
	for _, a := range keep {
		if a.State != alert.Resolved {
			out.Status = alert.Firing
		}
	}
	return out, true
}

func (c *Channel) routes(a alert.Alert) bool {
	if len(c.Pools) > 0 {
		pool := a.Labels["pool"]
		if pool == "" && a.Replacement != nil {
			pool = a.Replacement.Pool
		}
		// Alerts about no pool (collector errors, zwatch itself) concern every pool.
		if pool != "" && !slices.Contains(c.Pools, pool) {
			return false
		}
	}
	if len(c.Alerts) > 0 {
		for _, g := range c.Alerts {
			if ok, _ := path.Match(g, a.Name); ok {
				return true
			}
		}
		return false
	}
	return true
}

// consumerName is the channel's durable JetStream consumer.
func consumerName(channel string) string { return "notify_" + config.ChannelToken(channel) }

type msgKey struct{}

// withMessage carries the rendered Message to the notifier: notify's
// interface passes only subject and body, and the services need the HTML
// part, severity and summary as well.
func withMessage(ctx context.Context, m Message) context.Context {
	return context.WithValue(ctx, msgKey{}, m)
}

// messageFrom returns the Message in ctx, or builds a plain one from what
// notify passed.
func messageFrom(ctx context.Context, subject, text string) Message {
	if m, ok := ctx.Value(msgKey{}).(Message); ok {
		return m
	}
	summary := oneLine(subject)
	if !strings.HasPrefix(text, summary) {
		text = summary + "\n\n" + text
	}
	return Message{
		Title: "zwatch", Summary: summary, Text: text, Severity: alert.Warning,
		HTML: "<pre>" + html.EscapeString(text) + "</pre>", Created: time.Now(),
	}
}
