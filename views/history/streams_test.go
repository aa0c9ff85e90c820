package history

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Open makes the four streams beside the facts and alerts streams (which
// JetStream allows only when no subject overlaps), each bounded in age,
// bytes and per-source count, compressed; Attach finds them.
func TestOpenMakesBoundedStreams(t *testing.T) {
	b := openBus(t, "")
	defer b.Close()
	ctx := context.Background()
	if _, err := Attach(ctx, b.JS, testConfig()); err == nil || !strings.Contains(err.Error(), "no history on this bus") {
		t.Fatalf("Attach before Open: %v", err)
	}
	cfg := testConfig()
	s := openStore(t, b, cfg)
	want := map[string]struct {
		age     time.Duration
		perSubj int64
	}{
		StreamRaw:    {7 * 24 * time.Hour, 7*24*12 + rawSlack},
		StreamHour:   {30 * 24 * time.Hour, 30*24 + 2},
		StreamDay:    {400 * 24 * time.Hour, 402},
		StreamEvents: {400 * 24 * time.Hour, eventsPerSubject},
	}
	for name, w := range want {
		info, err := mustStream(t, s, name).Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := info.Config
		if c.MaxAge != w.age || c.MaxMsgsPerSubject != w.perSubj || c.MaxBytes != int64(cfg.MaxMB)<<20 ||
			c.Discard != jetstream.DiscardOld || c.Compression != jetstream.S2Compression || c.Storage != jetstream.FileStorage {
			t.Errorf("%s: age %s, per subject %d, bytes %d, discard %v, compression %v", name, c.MaxAge, c.MaxMsgsPerSubject, c.MaxBytes, c.Discard, c.Compression)
		}
	}
	// Opening again (a restart) updates in place.
	if _, err := Open(ctx, b.JS, cfg, 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(ctx, b.JS, cfg); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Size(ctx); err != nil || n != 0 {
		t.Errorf("Size of empty streams: %d, %v", n, err)
	}
	bad := cfg
	bad.RawInterval = 0
	if _, err := Open(ctx, b.JS, bad, 1, nil); err == nil || !strings.Contains(err.Error(), "history.raw_interval") {
		t.Errorf("Open with raw_interval 0: %v", err)
	}
}

// Streams larger than the bus store set aside for them are refused with an
// error that names the setting.
func TestOpenBeyondTheStoreSaysWhy(t *testing.T) {
	b := openBus(t, "")
	defer b.Close()
	big := testConfig()
	big.MaxMB = 512
	_, err := Open(context.Background(), b.JS, big, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "lower history.max_mb") {
		t.Fatalf("Open of 4 x 512 MiB on a store sized for 4 x %d: %v", testConfig().MaxMB, err)
	}
}
