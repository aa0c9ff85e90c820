package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// roundTrip makes each of the rule engine's writes to the bus answer after
// d, as a cluster's do (issue 19's burst: three nodes, R3, under load):
// the outbox's publishes, asynchronous ones included, and the state
// bucket's writes. Writes in flight together each take d, not d each in
// turn.
type roundTrip struct {
	jetstream.JetStream
	d time.Duration
}

func (j roundTrip) Publish(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	time.Sleep(j.d)
	return j.JetStream.Publish(ctx, subject, data, opts...)
}

func (j roundTrip) PublishAsync(subject string, data []byte, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	f, err := j.JetStream.PublishAsync(subject, data, opts...)
	if err != nil {
		return nil, err
	}
	late := &lateAck{PubAckFuture: f, ok: make(chan *jetstream.PubAck, 1), err: make(chan error, 1)}
	at := time.Now().Add(j.d)
	go func() {
		select {
		case ack := <-f.Ok():
			time.Sleep(time.Until(at))
			late.ok <- ack
		case err := <-f.Err():
			time.Sleep(time.Until(at))
			late.err <- err
		}
	}()
	return late, nil
}

func (j roundTrip) KeyValue(ctx context.Context, bucket string) (jetstream.KeyValue, error) {
	kv, err := j.JetStream.KeyValue(ctx, bucket)
	if err != nil {
		return nil, err
	}
	return slowKV{kv, j.d}, nil
}

type lateAck struct {
	jetstream.PubAckFuture
	ok  chan *jetstream.PubAck
	err chan error
}

func (a *lateAck) Ok() <-chan *jetstream.PubAck { return a.ok }
func (a *lateAck) Err() <-chan error            { return a.err }

type slowKV struct {
	jetstream.KeyValue
	d time.Duration
}

func (kv slowKV) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	time.Sleep(kv.d)
	return kv.KeyValue.Put(ctx, key, value)
}

func (kv slowKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	time.Sleep(kv.d)
	return kv.KeyValue.Create(ctx, key, value, opts...)
}

func (kv slowKV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	time.Sleep(kv.d)
	return kv.KeyValue.Update(ctx, key, value, rev)
}

// Thirty hosts degrade at once on a bus whose writes take 50 ms. Handled
// one fact at a time, each page cost three writes in turn (its fact's
// state, its publish, its state once sent): 4.5 s for the last one. The
// facts that wait together are saved, published and saved together.
func TestRunBurstOfPagesGoesOutTogether(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bb := newBatchBench(ctx, t)
	const hosts, rtt = 30, 50 * time.Millisecond
	name := func(i int) string { return fmt.Sprintf("nas%02d", i) }
	for i := range hosts {
		bb.heartbeats(name(i), 1)
	}
	stop := bb.start(roundTrip{bb.b.JS, rtt})
	defer stop()
	bb.waitAcked()
	start := time.Now()
	for i := range hosts {
		bb.status(name(i), faultFile)
	}
	bb.waitNotes(hosts)
	took := time.Since(start)
	t.Logf("%d pages on a bus answering after %v: the last in the outbox after %v", hosts, rtt, took.Round(time.Millisecond))
	if one := hosts * 3 * rtt; took > one/3 {
		t.Errorf("the burst took %v; one fact at a time takes %v", took.Round(time.Millisecond), one)
	}
	bb.waitAcked()
	want := map[string]int{}
	for i := range hosts {
		want[name(i)+" firing"] = 1
	}
	bb.checkNotes(want)
}

// A host's fault and its recovery reach the engine in one batch (a disk
// that dropped out and was back at the next reading, behind a backlog):
// the fault still pages and then resolves, as when each fact was handled
// on its own, instead of vanishing inside the batch.
func TestRunFaultAndRecoveryInOneBatchBothNotify(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bb := newBatchBench(ctx, t)
	bb.status("nas1", faultFile)
	bb.status("nas1", healthyFile)
	bb.status("nas2", faultFile)
	stop := bb.start(bb.b.JS) // the three wait for it: one pull, one batch
	defer stop()
	bb.waitNotes(3)
	bb.waitAcked()
	bb.checkNotes(map[string]int{"nas1 firing": 1, "nas1 resolved": 1, "nas2 firing": 1})
}
