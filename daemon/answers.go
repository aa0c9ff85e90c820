package daemon

import (
	"context"
	"errors"
	"log/slog"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/incident"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// answers is what lets a channel's app answer a page (Telegram's buttons),
// and, with actions.replace, replace its disk (replace.go):
// the install's key, from the state directory, and incident.Answer through
// this server's bus. Nil, and said once, when the key cannot be had.
func answers(ctx context.Context, cfg *config.Config, b *bus.Bus, log *slog.Logger) *delivery.Answers {
	key, err := answer.LoadKey(cfg.StateDir)
	if err != nil {
		log.Warn("pages carry no answer buttons", "err", err)
		return nil
	}
	repl := replacer(ctx, cfg, b, log)
	return &delivery.Answers{Key: key, Do: func(ctx context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
		switch {
		case !answer.ReplaceVerb(act.Verb):
		case repl == nil:
			return answer.Outcome{Text: "Replacing a disk from the phone is off on this zwatch (actions.replace)."}, nil
		case act.Verb == answer.Replace:
			return repl.Ask(ctx, act.Incident)
		case act.Verb == answer.Confirm:
			return repl.Confirm(ctx, act.Incident, by, source)
		default:
			return repl.Cancel(ctx, act.Incident, by, source)
		}
		res, err := incident.Answer(ctx, b, facts.IncidentActionData{Incident: act.Incident, Action: act.Verb, By: by, Source: source}, answer.SnoozeFor)
		if errors.Is(err, incident.ErrNotFiring) {
			return answer.Outcome{}, answer.ErrGone
		}
		if err != nil {
			return answer.Outcome{}, err
		}
		out := answer.Outcome{Host: res.Host, Alerts: len(res.Alerts)}
		if res.Silence != nil {
			out.Until = res.Silence.EndsAt
		}
		return out, nil
	}}
}
