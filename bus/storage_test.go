package bus

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestFitStore(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "blk"), make([]byte, 1<<20), 0o600) // 1 MiB already in the store
	limit := StoreLimit(Options{})
	if want := int64(24+256+64+64) << 20; limit != want {
		t.Fatalf("default store limit %d, want %d", limit, want)
	}
	fake := func(free uint64) statfsFunc {
		return func(string) (uint64, uint64, error) { return free, 8 << 30, nil }
	}
	// The store at its limit leaves a quarter of free + held space free.
	enough := (uint64(limit)*4+2)/3 + 4 - 1<<20
	if z, shrunk, err := fitStore(dir, Options{}, fake(enough)); err != nil || shrunk || z.Total() != limit {
		t.Errorf("%d bytes free: %+v shrunk=%v %v", enough, z, shrunk, err)
	}
	// Less room (500 MiB free; the e2e guest once had 568.8 MiB, which the
	// default store fits since facts are 24 MiB): every bound shrinks in
	// proportion, and the store still leaves its quarter.
	z, shrunk, err := fitStore(dir, Options{}, fake(500<<20))
	if err != nil || !shrunk {
		t.Fatalf("500 MiB free: %+v shrunk=%v %v", z, shrunk, err)
	}
	if budget := int64((500<<20 + 1<<20) / 4 * 3); z.Total() > budget || z.Total() < budget-4<<20 {
		t.Errorf("shrunk to %d, want about %d", z.Total(), budget)
	}
	if z.Alerts <= z.Facts || z.Facts < smallestSizes.Facts {
		t.Errorf("shrunk sizes out of proportion: %+v", z)
	}
	// Very little room: the floors hold, down to the smallest store.
	z, shrunk, err = fitStore(dir, Options{}, fake(60<<20))
	if err != nil || !shrunk || z.Total() < smallestSizes.Total() {
		t.Errorf("60 MiB free: %+v shrunk=%v %v", z, shrunk, err)
	}
	_, _, err = fitStore(dir, Options{}, fake(40<<20))
	if err == nil {
		t.Fatal("40 MiB free: accepted")
	}
	msg := err.Error()
	for _, want := range []string{dir, "40.0 MiB free of 8192.0 MiB", "holds 1.0 MiB", "needs at least 57.7 MiB free", "smallest store 44.0 MiB", "state_dir"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
	if _, _, err := fitStore(dir, Options{}, func(string) (uint64, uint64, error) { return 0, 0, errors.New("boom") }); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("statfs failure: %v", err)
	}
	// A larger facts stream raises the limit by as much.
	if d := StoreLimit(Options{FactsMaxBytes: 1 << 30}) - limit; d != 1<<30-defaultFactsBytes {
		t.Errorf("facts_max_mb does not count: %d", d)
	}
}

// The embedded server's max_file_store is the store limit, so JetStream
// itself refuses to grow beyond it.
func TestEmbeddedStoreLimitIsMaxStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Options{FactSubjects: testFactSubjects, StateDir: t.TempDir(), FactsMaxBytes: 8 << 20}
	b, err := Open(ctx, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := b.server.srv.JetStreamConfig().MaxStore; got != StoreLimit(o) {
		t.Errorf("max_file_store %d, want %d", got, StoreLimit(o))
	}
	// A stream beyond the limit is refused at once, not retried for a minute.
	start := time.Now()
	err = RetryAPI(ctx, func(ctx context.Context) error {
		_, err := b.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "TOO_BIG", Subjects: []string{"toobig"}, MaxBytes: StoreLimit(o)})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "insufficient storage") || !strings.Contains(err.Error(), "bus.facts_max_mb") {
		t.Errorf("stream beyond the store limit: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refusal took %s", took)
	}
	free, total, err := StoreSpace(o.StateDir)
	if err != nil || free == 0 || total < free {
		t.Errorf("StoreSpace: free %d total %d err %v", free, total, err)
	}
}

// On a 2 MiB filesystem the embedded bus refuses to start at once, in one
// line that names the path, the free space, the need and the fix (it used
// to run 60 s and exit with "insufficient storage resources available").
func TestEmbeddedRefusesTinyFilesystem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	b, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: dir}, slog.New(slog.DiscardHandler))
	took := time.Since(start)
	if err == nil {
		b.Close()
		t.Fatal("started on a 2 MiB filesystem")
	}
	msg := err.Error()
	t.Logf("refused in %s: %s", took, msg)
	if took > 5*time.Second {
		t.Errorf("refusal took %s, want under 5s", took)
	}
	for _, want := range []string{filepath.Join(dir, "jetstream"), "free of 2.0 MiB", "needs", "move state_dir"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q", want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
}

// A filesystem with less room than the default limits (a small root with
// a few hundred MiB left) still runs the bus, its streams shrunk to fit:
// being told is worth more than full-size buffers.
func TestEmbeddedShrinksToFit(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Options{FactSubjects: testFactSubjects, StateDir: dir}
	b, err := Open(ctx, o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("200 MiB filesystem: %v", err)
	}
	defer b.Close()
	z := b.Sizes(o)
	if z.Total() > 150<<20 || z.Total() < 140<<20 {
		t.Errorf("store limit %d MiB on 200 MiB, want about 150", z.Total()>>20)
	}
	if got := b.server.srv.JetStreamConfig().MaxStore; got != z.Total() {
		t.Errorf("max_file_store %d, want %d", got, z.Total())
	}
	s, err := b.JS.Stream(ctx, StreamAlerts)
	if err != nil || s.CachedInfo().Config.MaxBytes != z.Alerts {
		t.Fatalf("outbox stream: %v (max bytes want %d)", err, z.Alerts)
	}
	if err := b.Publish(ctx, Subject("nas1", "heartbeat"), []byte(`{}`)); err != nil {
		t.Errorf("publish on the shrunk store: %v", err)
	}
}

// TestFitStoreCountsHistory: the history's streams count toward the limit,
// and shrink with the rest down to their own floor.
func TestFitStoreCountsHistory(t *testing.T) {
	dir := t.TempDir()
	o := Options{HistoryMaxBytes: 64 << 20}
	fake := func(free uint64) statfsFunc {
		return func(string) (uint64, uint64, error) { return free, 8 << 30, nil }
	}
	z, shrunk, err := fitStore(dir, o, fake(8<<30))
	if err != nil || shrunk || z.History != 64<<20 || z.Total() != StoreLimit(Options{})+64<<20 {
		t.Errorf("room for all: %+v shrunk=%v %v", z, shrunk, err)
	}
	z, shrunk, err = fitStore(dir, o, fake(400<<20))
	if err != nil || !shrunk || z.History < smallestHistory || z.History >= 64<<20 {
		t.Errorf("400 MiB free: %+v shrunk=%v %v", z, shrunk, err)
	}
}
