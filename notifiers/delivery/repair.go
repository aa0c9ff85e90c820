package delivery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// repairConsumer removes a consumer the embedded server cannot open (its
// o.dat or meta files are damaged: "error creating store for consumer"),
// so that its owner creates it again. The server did not load it, so its
// folder is removed from disk; what the loss means is paged.
func repairConsumer(b *bus.Bus, w *storageWatch) func(ctx context.Context, stream, name string) error {
	return func(ctx context.Context, stream, name string) error {
		store := b.StoreDir()
		if store == "" {
			return errors.New("the bus is not embedded: remove the consumer on the NATS server (`nats consumer rm " + stream + " " + name + "`)")
		}
		if err := b.JS.DeleteConsumer(ctx, stream, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("delete consumer %s of %s: %w", name, stream, err)
		}
		// <store>/<account>/streams/<stream>/obs/<consumer>
		dirs, err := filepath.Glob(filepath.Join(store, "*", "streams", stream, "obs", name))
		if err != nil {
			return err
		}
		for _, d := range dirs {
			if err := os.RemoveAll(d); err != nil {
				return fmt.Errorf("remove damaged consumer %s: %w", d, err)
			}
		}
		lost := "the rule engine resumes after the last fact it recorded, or from the latest fact of each kind: events in between may be missed"
		if stream == bus.StreamAlerts {
			lost = "the channel starts again with the last hour of the outbox: older notifications it had not delivered are lost, recent ones may come twice"
		}
		w.repaired(fmt.Sprintf("consumer %s of stream %s could not be read and was recreated (%s)", name, stream, lost))
		return nil
	}
}

// checkStreams looks for messages a stream lost (a damaged message block is
// dropped when the server loads it): a consumer that has read past the
// stream's last message proves it, and would skip new messages until the
// stream caught up, so the stream's next sequence is moved past it.
func checkStreams(ctx context.Context, b *bus.Bus, w *storageWatch) error {
	// The state bucket is a stream too (KV_<bucket>); it has no consumers,
	// so only what the server reports lost is known of it.
	for _, name := range []string{bus.StreamFacts, bus.StreamAlerts, "KV_" + bus.StateBucket} {
		st, err := b.JS.Stream(ctx, name)
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		if l := info.State.Lost; l != nil && len(l.Msgs) > 0 {
			w.repaired(fmt.Sprintf("stream %s lost %d damaged message(s) (%d bytes)", name, len(l.Msgs), l.Bytes))
		}
		var ahead uint64
		lister := st.ListConsumers(ctx)
		for ci := range lister.Info() {
			ahead = max(ahead, ci.Delivered.Stream, ci.AckFloor.Stream)
		}
		if err := lister.Err(); err != nil {
			return fmt.Errorf("consumers of %s: %w", name, err)
		}
		if ahead <= info.State.LastSeq {
			continue
		}
		if err := st.Purge(ctx, jetstream.WithPurgeSequence(ahead+1)); err != nil {
			return fmt.Errorf("move stream %s past sequence %d: %w", name, ahead, err)
		}
		what := fmt.Sprintf("stream %s lost messages %d-%d (its store was damaged); it continues at %d", name, info.State.LastSeq+1, ahead, ahead+1)
		if name == bus.StreamAlerts {
			what += ": notifications in it that were not yet delivered are lost"
		}
		w.repaired(what)
	}
	return nil
}
