package rules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// openConsumer creates or opens the engine's durable consumer. One the
// server cannot open (error 10012: its files are damaged) is removed and
// created again after the last fact applied, as the state bucket says.
func openConsumer(ctx context.Context, b *bus.Bus, kv jetstream.KeyValue, opts RunOptions, log *slog.Logger) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable:       ConsumerName,
		Description:   "zwatch rule engine",
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckWait:       30 * time.Second,
		MaxAckPending: 256,
	}
	if existing, err := b.JS.Consumer(ctx, bus.StreamFacts, ConsumerName); err == nil {
		// Where it starts is fixed at creation (it may have been recreated).
		info := existing.CachedInfo()
		cfg.DeliverPolicy, cfg.OptStartSeq = info.Config.DeliverPolicy, info.Config.OptStartSeq
	}
	cons, err := b.JS.CreateOrUpdateConsumer(ctx, bus.StreamFacts, cfg)
	if err != nil && opts.RepairConsumer != nil && consumerStoreDamaged(err) {
		if rerr := opts.RepairConsumer(ctx, bus.StreamFacts, ConsumerName); rerr != nil {
			return nil, fmt.Errorf("rules: consumer %s on %s is damaged (%v) and could not be removed: %w", ConsumerName, bus.StreamFacts, err, rerr)
		}
		pos := readPosition(ctx, kv)
		if pos > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, pos+1
		} else {
			// No position saved: the last fact of every subject rebuilds
			// the state; events in between are not replayed.
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverLastPerSubjectPolicy, 0
		}
		cons, err = b.JS.CreateOrUpdateConsumer(ctx, bus.StreamFacts, cfg)
		if err == nil {
			log.Error("rules: the rule engine's consumer was damaged and has been recreated", "consumer", ConsumerName,
				"from_seq", cfg.OptStartSeq, "policy", cfg.DeliverPolicy.String())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rules: consumer %s on %s: %w", ConsumerName, bus.StreamFacts, err)
	}
	return cons, nil
}

// consumerStoreDamaged reports whether err is the server's refusal to open
// a consumer whose files it cannot read.
func consumerStoreDamaged(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.ErrorCode(10012) {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "error creating store for consumer")
}

func readPosition(ctx context.Context, kv jetstream.KeyValue) uint64 {
	ent, err := kv.Get(ctx, positionKey)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(string(ent.Value()), 10, 64)
	return n
}
