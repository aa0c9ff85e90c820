package facts_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/facts"
)

// tapeLibraryData is the payload of a kind of fact that exists only in
// this test: what a tape library says about its drives.
type tapeLibraryData struct {
	Drives []tapeDrive `json:"drives"`
}

type tapeDrive struct {
	Slot        int  `json:"slot"`
	CleaningDue bool `json:"cleaning_due"`
}

// tapeLibrary is its declaration: the one line a new kind of fact needs
// besides its payload type.
var tapeLibrary = facts.Define[tapeLibraryData]("tape.library")

// tapeReader is the state of a reader of tape facts: what its handler got.
type tapeReader struct {
	host      string
	collector string
	library   *tapeLibraryData
}

// A new kind of fact is one declaration plus the handlers that want it: the
// kind above, published the way a collector publishes on a real embedded
// bus, reaches a handler registered for it as its typed payload. Nothing
// else in zwatch knows the kind.
func TestANewKindOfFactIsOneDeclaration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The kind is not in facts.Kinds(): its subject is added to the stream here.
	b, err := bus.Open(ctx, bus.Options{FactSubjects: append(facts.StreamSubjects(), tapeLibrary.Filter("*")), StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	read := func(context.Context) (tapeLibraryData, error) {
		return tapeLibraryData{Drives: []tapeDrive{{Slot: 1}, {Slot: 2, CleaningDue: true}}}, nil
	}
	pub := &collectors.BusPublisher{Bus: b, Host: "nas1"}
	if err := collectors.PublishRead(ctx, pub, tapeLibrary, "tape_library", read); err != nil {
		t.Fatal(err)
	}

	var reads facts.Handlers[*tapeReader]
	facts.On(&reads, tapeLibrary, func(r *tapeReader, env bus.Envelope, d *tapeLibraryData) error {
		r.host, r.collector, r.library = env.Host, env.Collector, d
		return nil
	})
	// The reader subscribes to what it handles, as the history does.
	var filters []string
	for _, k := range reads.Kinds() {
		filters = append(filters, k.Filter("*"))
	}
	if filters, err = bus.StoredFilters(ctx, b.JS, filters); err != nil {
		t.Fatal(err)
	}
	cons, err := b.JS.OrderedConsumer(ctx, bus.StreamFacts, jetstream.OrderedConsumerConfig{FilterSubjects: filters})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("no tape fact on %v: %v", filters, err)
	}
	h, hostToken, ok := reads.ForSubject(m.Subject())
	if !ok || hostToken != "nas1" || m.Subject() != bus.Subject("nas1", "tape.library") {
		t.Fatalf("subject %s: handled %v, host %q", m.Subject(), ok, hostToken)
	}
	var got tapeReader
	if err := h.HandleMsg(&got, m.Data()); err != nil {
		t.Fatal(err)
	}
	if got.host != "nas1" || got.collector != "tape_library" || got.library == nil ||
		len(got.library.Drives) != 2 || !got.library.Drives[1].CleaningDue {
		t.Errorf("the handler got %+v, library %+v", got, got.library)
	}
}
