package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
)

// ConsumerName is the durable consumer on bus.StreamFacts that rule engines
// share: each fact is evaluated by one engine, and nothing is lost while
// none runs.
const ConsumerName = "rules"

// tickEvery is how often Run looks for due notifications and time-based rules.
const tickEvery = time.Second

// Run evaluates facts from the bus until ctx ends. Each message is acked
// only after its effects are saved in the state bucket; notifications go to
// ZWATCH_ALERTS with their ID as the JetStream message ID, so a re-sent one
// (after a crash between publish and save) is dropped as a duplicate.
func Run(ctx context.Context, b *bus.Bus, cfg config.RulesConfig, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return fmt.Errorf("rules: open state bucket %s: %w", bus.StateBucket, err)
	}
	e := NewEngine(cfg, log)
	if err := e.Load(ctx, kv); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	cons, err := b.JS.CreateOrUpdateConsumer(ctx, bus.StreamFacts, jetstream.ConsumerConfig{
		Durable:       ConsumerName,
		Description:   "zwatch rule engine",
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckWait:       30 * time.Second,
		MaxAckPending: 256,
	})
	if err != nil {
		return fmt.Errorf("rules: consumer %s on %s: %w", ConsumerName, bus.StreamFacts, err)
	}
	stream, err := streamID(ctx, b.JS)
	if err != nil {
		return err
	}
	msgs, err := cons.Messages(jetstream.PullMaxMessages(64))
	if err != nil {
		return fmt.Errorf("rules: consume %s: %w", bus.StreamFacts, err)
	}
	ch := make(chan jetstream.Msg, 64)
	go func() {
		defer close(ch)
		for {
			m, err := msgs.Next()
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) && ctx.Err() == nil {
					log.Error("rules: consumer stopped", "err", err)
				}
				return
			}
			select {
			case ch <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer msgs.Stop()

	r := &runner{e: e, b: b, kv: kv, log: log, stream: stream}
	log.Info("rule engine running", "consumer", ConsumerName, "stream", bus.StreamFacts)
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("rules: fact consumer closed")
			}
			r.handle(ctx, m)
		case <-t.C:
			r.tick(ctx, time.Now())
		}
	}
}

type runner struct {
	e   *Engine
	b   *bus.Bus
	kv  jetstream.KeyValue
	log *slog.Logger
	// stream identifies the facts stream the sequences count in.
	stream string
}

func (r *runner) handle(ctx context.Context, m jetstream.Msg) {
	var env bus.Envelope
	if err := json.Unmarshal(m.Data(), &env); err != nil {
		r.log.Warn("rules: dropping unreadable message", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	// NATS permissions bind an agent to its own subjects; the host inside
	// the message must be that same host, or one agent could speak for
	// another.
	if host, ok := bus.HostOf(m.Subject()); !ok || bus.Token(env.Host) != host {
		r.log.Warn("rules: dropping message whose host does not match its subject", "subject", m.Subject(), "host", env.Host)
		_ = m.Term()
		return
	}
	start := time.Now()
	if r.log.Enabled(ctx, slog.LevelDebug) {
		// With the collectors' lines, the timeline of a fault: how old the
		// fact was when it arrived, and how long it took to evaluate.
		defer func() {
			r.log.Debug("fact", "subject", m.Subject(), "age", start.Sub(env.CollectedAt).Round(time.Millisecond), "took", time.Since(start).Round(time.Millisecond))
		}()
	}
	if err := r.e.ObserveSeq(env, positionOf(m, r.stream), start); err != nil {
		// A message that cannot be read now never will be.
		r.log.Warn("rules: dropping message", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	if err := r.e.Save(ctx, r.kv); err != nil {
		r.log.Warn("rules: state not saved; message will be redelivered", "err", err)
		r.reload(ctx)
		_ = m.NakWithDelay(time.Second)
		return
	}
	if err := m.Ack(); err != nil {
		r.log.Warn("rules: ack failed", "subject", m.Subject(), "err", err)
	}
	// The first page of a quiet group is due at once: do not wait up to a
	// second for the ticker (a pulled disk should reach the phone now).
	if now := time.Now(); r.e.Due(now) {
		r.tick(ctx, now)
	}
}

func (r *runner) tick(ctx context.Context, now time.Time) {
	notes := r.e.Tick(now)
	for _, n := range notes {
		if err := publish(ctx, r.b, n); err != nil {
			// Forget that it was sent: the saved state still says due.
			r.log.Error("rules: notification not published; will retry", "id", n.ID, "err", err)
			r.reload(ctx)
			return
		}
		r.log.Info("notification", "id", n.ID, "host", n.Host, "status", n.Status, "alerts", len(n.Alerts), "severity", n.MaxSeverity())
	}
	if err := r.e.Save(ctx, r.kv); err != nil {
		r.log.Warn("rules: state not saved after tick", "err", err)
		r.reload(ctx)
	}
}

func (r *runner) reload(ctx context.Context) {
	if err := r.e.Load(ctx, r.kv); err != nil {
		r.log.Error("rules: reload state", "err", err)
	}
}

// publish puts a notification on zwatch.v1.<host>.alert.
func publish(ctx context.Context, b *bus.Bus, n alert.Notification) error {
	data, err := wrapNotification(n)
	if err != nil {
		return err
	}
	if _, err := b.JS.Publish(ctx, bus.Subject(n.Host, bus.KindAlert), data, jetstream.WithMsgID(n.ID)); err != nil {
		return fmt.Errorf("publish notification %s: %w", n.ID, err)
	}
	return nil
}

func wrapNotification(n alert.Notification) ([]byte, error) {
	return bus.WrapSchema(bus.SchemaNotification, n.Host, "rules", n.Created, n)
}
