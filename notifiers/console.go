package notifiers

import (
	"context"
	"log/slog"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// console writes notifications to zwatch's log: always there, so a fresh
// install shows what it would send.
type console struct{ log *slog.Logger }

var _ channel.Sender = console{}

func consoleChannel(log *slog.Logger) Channel {
	return Channel{
		Name: TypeConsole, Type: TypeConsole, MinSeverity: alert.Info, SendResolved: true,
		Sender: console{log: log},
	}
}

func (c console) Send(ctx context.Context, m Message) error {
	level := slog.LevelInfo
	switch {
	case m.Resolved:
	case m.Severity == alert.Critical:
		level = slog.LevelError
	case m.Severity == alert.Warning:
		level = slog.LevelWarn
	}
	c.log.Log(ctx, level, "notification", "summary", m.Summary, "id", m.ID, "host", m.Host,
		"severity", string(m.Severity), "resolved", m.Resolved, "test", m.Test, "text", m.Text)
	return nil
}
