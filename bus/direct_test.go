package bus

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestBatchedReads: the views' batched reads on the real embedded server
// answer what one read per message would, and a stream without direct gets
// is read one message at a time instead.
func TestBatchedReads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 3 {
		for _, host := range []string{"nas1", "nas2"} {
			msg, _ := Wrap(KindAlert, host, "rules", time.Now(), map[string]int{"n": i})
			if err := b.Publish(ctx, Subject(host, KindAlert), msg); err != nil {
				t.Fatal(err)
			}
		}
	}

	last, err := LastMsgs(ctx, b.JS, StreamAlerts, []string{"zwatch.v1.*.alert"})
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != 2 || last[0].Subject != "zwatch.v1.nas1.alert" || last[0].Sequence != 5 || last[1].Sequence != 6 {
		t.Fatalf("last messages: %v", seqsOf(last))
	}
	r, err := MsgRange(ctx, b.JS, StreamAlerts, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(r); fmt.Sprint(got) != "[2 3 4]" {
		t.Fatalf("range 2..4: %v", got)
	}
	if r, err := MsgRange(ctx, b.JS, StreamAlerts, 7, 5); err != nil || len(r) != 0 {
		t.Fatalf("range past the end: %v %v", seqsOf(r), err)
	}

	kv, err := b.JS.KeyValue(ctx, StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rules.host.a", "rules.host.b", "other"} {
		if _, err := kv.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kv.Put(ctx, "rules.host.a", []byte("a2")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "rules.host.b"); err != nil {
		t.Fatal(err)
	}
	vals, err := KVLast(ctx, b.JS, StateBucket, "rules.host.>")
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 1 || string(vals["rules.host.a"].Data) != "a2" || vals["rules.host.a"].Revision == 0 {
		t.Fatalf("KVLast: %v", vals)
	}

	// A stream made without AllowDirect has nobody answering direct gets.
	if _, err := b.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := b.JS.Publish(ctx, fmt.Sprintf("plain.%d", i%2), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LastMsgsBatch(ctx, b.JS, "PLAIN", []string{"plain.>"}); err == nil {
		t.Fatal("a batch from a stream without direct gets")
	}
	last, err = LastMsgs(ctx, b.JS, "PLAIN", []string{"plain.>"})
	if err != nil || fmt.Sprint(seqsOf(last)) != "[3 4]" {
		t.Fatalf("one by one: %v %v", seqsOf(last), err)
	}
	r, err = MsgRange(ctx, b.JS, "PLAIN", 2, 2)
	if err != nil || fmt.Sprint(seqsOf(r)) != "[2 3]" {
		t.Fatalf("range one by one: %v %v", seqsOf(r), err)
	}

	// More subjects than one answer may hold: one at a time.
	for i := range MaxLastMsgs + 5 {
		if _, err := b.JS.Publish(ctx, fmt.Sprintf("plain.many.%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.JS.UpdateStream(ctx, jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := LastMsgsBatch(ctx, b.JS, "PLAIN", []string{"plain.many.>"}); !errors.Is(err, ErrBatchUnavailable) {
		t.Fatalf("%d subjects in one batch: %v", MaxLastMsgs+5, err)
	}
	if last, err = LastMsgs(ctx, b.JS, "PLAIN", []string{"plain.many.>"}); err != nil || len(last) != MaxLastMsgs+5 {
		t.Fatalf("many subjects one by one: %d %v", len(last), err)
	}

	// A read whose context ends is an error, never a partial answer.
	done, stop := context.WithCancel(ctx)
	stop()
	if _, err := LastMsgs(done, b.JS, StreamAlerts, []string{"zwatch.v1.*.alert"}); err == nil {
		t.Fatal("a read after its context ended answered")
	}
}

func seqsOf(msgs []*jetstream.RawStreamMsg) []uint64 {
	out := make([]uint64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Sequence
	}
	return out
}

// TestFullBatchFitsTheQueue: a batched read answered by the most messages
// the server sends at once (MaxLastMsgs, each 4 KiB) arrives whole through
// the connection's small synchronous queue (syncQueueLen), in-process,
// where the server outpaces the reader most, and MsgRange caps n there.
func TestFullBatchFitsTheQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	kv, err := b.JS.KeyValue(ctx, StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 4096)
	for i := range MaxLastMsgs {
		if _, err := kv.Put(ctx, fmt.Sprintf("full.k%04d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 5 { // a few times: an overflow depends on timing
		last, err := LastMsgsBatch(ctx, b.JS, "KV_"+StateBucket, []string{"$KV." + StateBucket + ".full.>"})
		if err != nil || len(last) != MaxLastMsgs {
			t.Fatalf("round %d: last messages: %d of %d, %v", round, len(last), MaxLastMsgs, err)
		}
		r, err := MsgRange(ctx, b.JS, "KV_"+StateBucket, 1, 2*MaxLastMsgs)
		if err != nil || len(r) != MaxLastMsgs || r[0].Sequence != 1 || r[len(r)-1].Sequence != MaxLastMsgs {
			t.Fatalf("round %d: range: %d messages, %v", round, len(r), err)
		}
	}
}
