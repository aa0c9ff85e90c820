package notifiers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Channel is one configured destination: a sender plus the filter that
// decides which alerts reach it.
type Channel struct {
	Name         string
	Type         string
	MinSeverity  alert.Severity
	SendResolved bool
	Pools        []string
	Alerts       []string
	// EscalationStep is the notify.escalation step (from 1) the channel
	// belongs to; 0 for a channel that gets the usual pages.
	EscalationStep int
	// Quiet, when set, holds the channel's warnings and info back during
	// its quiet time (delivery/quiet.go); nil: never quiet.
	Quiet *config.QuietHours
	// Sender delivers to the channel's service.
	Sender channel.Sender
}

// DeadLetterAlert names the warning the outbox sends through the other
// channels when one gives up on a notification (notifiers/delivery); a
// channel never receives the reports about itself (Select).
const DeadLetterAlert = "NotificationDeadLettered"

// TypeConsole is the always-available channel that writes to zwatch's log.
const TypeConsole = "console"

// Build turns the config into channels, without the console channel
// (Channels adds it, since it needs the logger). Each channel's settings, decoded by
// its type when the config was parsed, build its sender.
func Build(cfg config.NotifyConfig) ([]Channel, error) {
	var out []Channel
	var errs []error
	timeout := SendTimeout(cfg)
	for i, cc := range cfg.Channels {
		sev, ok := alert.ParseSeverity(cc.Severity())
		if !ok {
			errs = append(errs, fmt.Errorf("notify.channels[%d].min_severity: %q is not info, warning or critical", i, cc.MinSeverity))
			continue
		}
		s, err := newSender(cc, timeout)
		if err != nil {
			errs = append(errs, fmt.Errorf("notify.channels[%d] (%s): %w", i, cc.Name, err))
			continue
		}
		out = append(out, Channel{
			Name: cc.Name, Type: cc.Type, MinSeverity: sev, SendResolved: cc.Resolved(),
			Pools: cc.Route.Pools, Alerts: cc.Route.Alerts, Sender: s, EscalationStep: cfg.EscalationStepOf(cc.Name),
			Quiet: cc.Quiet,
		})
	}
	return out, errors.Join(errs...)
}

// SendTimeout is notify.send_timeout, or its default when unset.
func SendTimeout(cfg config.NotifyConfig) time.Duration {
	if d := cfg.SendTimeout.D(); d > 0 {
		return d
	}
	return config.DefaultNotify().SendTimeout.D()
}

// Channels builds the channels of cfg for delivery: the console first when
// it is on, writing to log, then the configured ones (Build).
func Channels(cfg config.NotifyConfig, log *slog.Logger) ([]Channel, error) {
	chans, err := Build(cfg)
	if err != nil {
		return nil, fmt.Errorf("notification channels: %w", err)
	}
	if cfg.Console {
		chans = append([]Channel{consoleChannel(log.With("channel", TypeConsole))}, chans...)
	}
	return chans, nil
}

func newSender(cc config.ChannelConfig, timeout time.Duration) (channel.Sender, error) {
	settings, ok := cc.Settings.(channel.Settings)
	if !ok {
		// No settings: the channel did not come through config.Parse with a
		// catalogue that has its type.
		return nil, fmt.Errorf("type %q is not supported", cc.Type)
	}
	// One client per channel: no shared state between channels, and a
	// timeout even if a caller forgets the context deadline.
	return settings.NewSender(channel.Env{HTTP: &http.Client{Timeout: timeout}, Timeout: timeout})
}

// Send delivers m through the channel's sender.
func (c *Channel) Send(ctx context.Context, m Message) error {
	if c.Sender == nil {
		return fmt.Errorf("channel %s has no sender", c.Name)
	}
	if err := c.Sender.Send(ctx, m); err != nil {
		return fmt.Errorf("%s %s: %w", c.Type, c.Name, err)
	}
	return nil
}

// Fix names the most likely cure for a delivery error on this channel, or
// "" when zwatch has no better idea than the error itself.
func (c *Channel) Fix(err error) string { return channel.Fix(c.Sender, err) }

// Select returns the part of n this channel should receive, and false when
// nothing is left: alerts below its severity, outside its route, resolved
// notices it does not want, and reports about its own failures are dropped.
func (c *Channel) Select(n alert.Notification) (alert.Notification, bool) {
	if !c.escalationWants(n) {
		return n, false
	}
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

// escalationWants: an escalation page goes to its step's channels only; an
// escalation channel otherwise hears only the incidents escalated to it
// (their repeats, rises and end), nothing else.
func (c *Channel) escalationWants(n alert.Notification) bool {
	if n.Escalation > 0 {
		return c.EscalationStep == n.Escalation
	}
	return c.EscalationStep == 0 || n.Escalated >= c.EscalationStep
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

// ConsumerName is the durable outbox consumer of the channel named channel:
// the outbox (notifiers/delivery) reads through it, and readers of its
// delivery progress (the status page, /metrics) look at it.
func ConsumerName(channel string) string { return "notify_" + config.ChannelToken(channel) }

// Probe runs the sender's cheap service check (channel.Prober); has is
// false for a sender that has none.
func (c *Channel) Probe(ctx context.Context) (has bool, err error) {
	p, ok := c.Sender.(channel.Prober)
	if !ok {
		return false, nil
	}
	if err := p.Probe(ctx); err != nil {
		return true, fmt.Errorf("%s %s: check: %w", c.Type, c.Name, err)
	}
	return true, nil
}
