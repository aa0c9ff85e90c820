package history

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// incoming is one message for the writer.
type incoming struct {
	subject string
	data    []byte
}

// Run is the writer: it reads the pool and SMART facts and the
// notifications as they come (each fact subject's newest first, so that a
// restart picks up where the facts stand) and stores points and events
// until ctx ends. It keeps no consumer state on the bus: what it stored
// is where it resumes from.
func (s *Store) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan incoming, 256)
	handler := func(m jetstream.Msg) {
		select {
		case in <- incoming{subject: m.Subject(), data: m.Data()}:
		case <-ctx.Done():
		}
	}
	factFilters, err := bus.StoredFilters(ctx, s.js, factSubjects())
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	consumers := []struct {
		stream string
		cfg    jetstream.OrderedConsumerConfig
	}{
		{bus.StreamFacts, jetstream.OrderedConsumerConfig{FilterSubjects: factFilters, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy}},
		{bus.StreamAlerts, jetstream.OrderedConsumerConfig{FilterSubjects: bus.AlertSubjects, DeliverPolicy: jetstream.DeliverNewPolicy}},
	}
	for _, c := range consumers {
		cons, err := s.js.OrderedConsumer(ctx, c.stream, c.cfg)
		if err != nil {
			return fmt.Errorf("history: read stream %s: %w", c.stream, err)
		}
		cc, err := cons.Consume(handler, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			s.log.Debug("history consumer", "stream", c.stream, "err", err)
		}))
		if err != nil {
			return fmt.Errorf("history: read stream %s: %w", c.stream, err)
		}
		defer cc.Stop()
	}
	w := newWriter(s)
	s.log.Debug("history writer started", "raw_interval", s.cfg.RawInterval.D())
	for {
		select {
		case <-ctx.Done():
			w.flush(context.WithoutCancel(ctx))
			return nil
		case m := <-in:
			w.ingest(ctx, m.subject, m.data)
			if len(in) == 0 {
				w.flush(ctx)
			}
		}
	}
}
