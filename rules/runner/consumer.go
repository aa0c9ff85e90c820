package runner

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// openConsumer creates or opens the engine's durable consumer. One the
// server cannot open (error 10012: its files are damaged) is removed and
// created again after the last fact applied, as the state bucket says.
func openConsumer(ctx context.Context, b *bus.Bus, kv jetstream.KeyValue, opts Options, log *slog.Logger) (jetstream.Consumer, error) {
	name, filter := consumerOf(opts)
	cfg := jetstream.ConsumerConfig{
		Durable:       name,
		FilterSubject: filter,
		Description:   "zwatch rule engine",
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckWait:       30 * time.Second,
		MaxAckPending: 256,
	}
	if existing, err := b.JS.Consumer(ctx, bus.StreamFacts, name); err == nil {
		// Where it starts is fixed at creation (it may have been recreated).
		info := existing.CachedInfo()
		cfg.DeliverPolicy, cfg.OptStartSeq = info.Config.DeliverPolicy, info.Config.OptStartSeq
	}
	cons, err := b.JS.CreateOrUpdateConsumer(ctx, bus.StreamFacts, cfg)
	if err != nil && delivery.ConsumerStoreDamaged(err) {
		if can, rerr := opts.Delivery.Repair(ctx, bus.StreamFacts, name); !can {
			return nil, fmt.Errorf("rules: consumer %s on %s: %w", name, bus.StreamFacts, err)
		} else if rerr != nil {
			return nil, fmt.Errorf("rules: consumer %s on %s is damaged (%v) and could not be removed: %w", name, bus.StreamFacts, err, rerr)
		}
		pos := readPosition(ctx, kv, positionKeyOf(opts))
		if pos > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, pos+1
		} else {
			// No position saved: the last fact of every subject rebuilds
			// the state; events in between are not replayed.
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverLastPerSubjectPolicy, 0
		}
		cons, err = b.JS.CreateOrUpdateConsumer(ctx, bus.StreamFacts, cfg)
		if err == nil {
			log.Error("rules: the rule engine's consumer was damaged and has been recreated", "consumer", name,
				"from_seq", cfg.OptStartSeq, "policy", cfg.DeliverPolicy.String())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rules: consumer %s on %s: %w", name, bus.StreamFacts, err)
	}
	return cons, nil
}

func readPosition(ctx context.Context, kv jetstream.KeyValue, key string) uint64 {
	ent, err := kv.Get(ctx, key)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(string(ent.Value()), 10, 64)
	return n
}

// pump reads the consumer's messages into ch (its own goroutine, so that
// the engine can wait on them beside its timers); stopped gets the error
// that ended the reading. giveBack, on the way out, returns what was
// pulled but not applied at once instead of after the ack wait (30 s): the
// engine that takes this partition over, or this one restarted, gets it
// now.
func pump(msgs jetstream.MessagesContext) (ch <-chan jetstream.Msg, stopped <-chan error, giveBack func()) {
	out := make(chan jetstream.Msg, 64)
	errc := make(chan error, 1)
	quit := make(chan struct{})
	go func() {
		defer close(out)
		for {
			m, err := msgs.Next()
			if err != nil {
				errc <- err
				return
			}
			select {
			case out <- m:
			case <-quit:
				_ = m.Nak()
			}
		}
	}()
	return out, errc, func() {
		close(quit)
		msgs.Drain()
		given := make(chan struct{})
		go func() {
			defer close(given)
			for m := range out {
				_ = m.Nak()
			}
		}()
		select { // before the connection closes, if the daemon is stopping
		case <-given:
		case <-time.After(2 * time.Second):
		}
	}
}
