package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/rules"
)

// streamID names the facts stream as it exists now, for rules.Position.Stream.
func streamID(ctx context.Context, js jetstream.JetStream) (string, error) {
	s, err := js.Stream(ctx, bus.StreamFacts)
	if err != nil {
		return "", fmt.Errorf("rules: look up stream %s: %w", bus.StreamFacts, err)
	}
	return s.CachedInfo().Created.UTC().Format(time.RFC3339Nano), nil
}

// positionOf is where m sits in the facts stream; a message without
// JetStream metadata has no known position and is simply applied.
func positionOf(m jetstream.Msg, stream string) rules.Position {
	p := rules.Position{Stream: stream, Subject: m.Subject()}
	if meta, err := m.Metadata(); err == nil {
		p.Seq, p.At = meta.Sequence.Stream, meta.Timestamp
	}
	return p
}
