package collectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/model/zfs"
)

const captured = "../testdata/captured/zfs-2.3.2/"

// zpoolStandIn writes an executable named name into dir that answers each argv
// (joined by spaces) by replaying a real captured output file; an argv
// mapped to "HANG" sleeps forever, like zpool on a suspended pool.
func zpoolStandIn(t testing.TB, dir, name string, answers map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncase \"$*\" in\n")
	for argv, file := range answers {
		if file == "HANG" {
			fmt.Fprintf(&b, "%q) exec sleep 3600 ;;\n", argv)
			continue
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%q) cat %q ;;\n", argv, abs)
	}
	b.WriteString("*) echo \"stand-in: unexpected argv: $*\" >&2; exit 2 ;;\nesac\n")
	return testutil.WriteScript(t, dir, name, b.String())
}

// memPublisher records what collectors publish.
type memPublisher struct {
	mu   sync.Mutex
	msgs []published
}

// published is one message the memPublisher received.
type published struct {
	kind, collector string
	data            any
	extra           []string
}

func (p *memPublisher) Publish(_ context.Context, kind, collector string, data any, extra ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, published{kind, collector, data, extra})
	return nil
}

func (p *memPublisher) all() []published {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]published(nil), p.msgs...)
}

// collectOnce runs c once and returns the one fact of kind, named after
// c, that it must publish.
func collectOnce[T any](t *testing.T, c Collector, kind string) T {
	t.Helper()
	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	msgs := pub.all()
	if len(msgs) != 1 || msgs[0].kind != kind || msgs[0].collector != c.Name() {
		t.Fatalf("published %+v, want one %s from %s", msgs, kind, c.Name())
	}
	return msgs[0].data.(T)
}

func TestZpoolStatusPicksJSONOn23(t *testing.T) {
	zpool := zpoolStandIn(t, t.TempDir(), "zpool", map[string]string{
		"version":                    captured + "a.version.txt",
		"status -j --json-int -p -P": captured + "b1-offline.zpool-status-j.json",
	})
	c := &ZpoolStatus{Runner: execx.New(5 * time.Second), Zpool: zpool}
	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	msgs := pub.all()
	if len(msgs) != 1 || msgs[0].kind != facts.ZpoolStatus.Name() {
		t.Fatalf("zfsPublished %+v", msgs)
	}
	sd := msgs[0].data.(facts.StatusData)
	if sd.Source != "json" {
		t.Fatalf("source %q, want json", sd.Source)
	}
	vault := findPool(sd.Pools, "vault")
	if vault == nil || vault.State != zfs.StateDegraded {
		t.Fatalf("vault = %+v", vault)
	}
	var offline []string
	for _, l := range vault.Vdevs[0].Leaves() {
		if l.State == zfs.StateOffline {
			offline = append(offline, l.Path)
		}
	}
	if len(offline) != 1 || !strings.Contains(offline[0], "virtio-ZWV0001") {
		t.Fatalf("offline leaves = %v", offline)
	}
}

func TestZpoolStatusTextBefore23(t *testing.T) {
	dir := t.TempDir()
	// A zpool that does not know -j (before 2.3) is read as text.
	zpool := zpoolStandIn(t, dir, "zpool", map[string]string{
		"status -p -s -P -v": captured + "b1-offline.zpool-status-p-P.txt",
	})
	c := &ZpoolStatus{Runner: execx.New(5 * time.Second), Zpool: zpool}
	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	sd := pub.all()[0].data.(facts.StatusData)
	if sd.Source != "text" || findPool(sd.Pools, "vault").State != zfs.StateDegraded {
		t.Fatalf("got %+v", sd)
	}
}

func TestZpoolListReadsRealOutput(t *testing.T) {
	zpool := zpoolStandIn(t, t.TempDir(), "zpool", map[string]string{"list -Hp": captured + "b1-offline.zpool-list-Hp.txt"})
	zfsCmd := rootDatasetsStandIn(t, captured+"b1-offline.zfs-list-Hp.txt")
	c := &ZpoolList{Runner: execx.New(5 * time.Second), Zpool: zpool, Zfs: zfsCmd}
	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	cd := pub.all()[0].data.(facts.CapacityData)
	if len(cd.Pools) != 2 || cd.Pools[1].Name != "vault" || cd.Pools[1].Health != zfs.StateDegraded || cd.Pools[1].SizeBytes != 5905580032 {
		t.Fatalf("pools = %+v", cd.Pools)
	}
	// Only the pools' root datasets: every dataset's quota is the datasets collector's.
	if len(cd.Datasets) != 2 || cd.Datasets[0].Name != "fast" || cd.Datasets[1].Name != "vault" || cd.Datasets[1].AvailBytes != 3706577120 {
		t.Fatalf("datasets = %+v", cd.Datasets)
	}
}

// rootDatasetsStandIn is a zfs that answers `zfs list -Hp -o
// name,used,avail,quota,refquota POOL...` with the rows of those names from
// a real full listing: the rows zfs prints for the names given.
func rootDatasetsStandIn(t testing.TB, listing string) string {
	t.Helper()
	abs, err := filepath.Abs(listing)
	if err != nil {
		t.Fatal(err)
	}
	return testutil.WriteScript(t, t.TempDir(), "zfs", fmt.Sprintf(`#!/bin/sh
[ "$1 $2 $3 $4" = "list -Hp -o name,used,avail,quota,refquota" ] || { echo "stand-in: unexpected argv: $*" >&2; exit 2; }
shift 4
for name in "$@"; do
	awk -F '\t' -v n="$name" '$1 == n' %q
done
`, abs))
}

func TestHungZpoolIsATimeoutNotAStuckDaemon(t *testing.T) {
	zpool := zpoolStandIn(t, t.TempDir(), "zpool", map[string]string{"list -Hp": "HANG"})
	c := &ZpoolList{Runner: execx.New(300 * time.Millisecond), Zpool: zpool}
	start := time.Now()
	err := c.Collect(context.Background(), &memPublisher{})
	if execx.KindOf(err) != execx.KindTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	ce := ErrorFor(c.Name(), "", err)
	if ce.Kind != execx.KindTimeout || !strings.Contains(ce.Fix, "SUSPENDED") {
		t.Fatalf("collector error = %+v", ce)
	}
}

func TestMissingZpool(t *testing.T) {
	c := &ZpoolList{Runner: execx.New(time.Second), Zpool: filepath.Join(t.TempDir(), "zpool")}
	err := c.Collect(context.Background(), &memPublisher{})
	if ce := ErrorFor(c.Name(), "", err); ce.Kind != execx.KindMissing || !strings.Contains(ce.Fix, "zfsutils-linux") {
		t.Fatalf("got %+v", ce)
	}
}

func TestLoopPublishesCollectorErrors(t *testing.T) {
	zpool := zpoolStandIn(t, t.TempDir(), "zpool", map[string]string{"list -Hp": "HANG"})
	c := &ZpoolList{Runner: execx.New(200 * time.Millisecond), Zpool: zpool}
	pub := &memPublisher{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { Loop(ctx, c, pub, 50*time.Millisecond, nil, discard()); close(done) }()
	deadline := time.After(3 * time.Second)
	for {
		msgs := pub.all()
		if len(msgs) >= 2 {
			ce := msgs[0].data.(facts.CollectorErrorData)
			if msgs[0].kind != facts.CollectorError.Name() || ce.Kind != execx.KindTimeout {
				t.Fatalf("first message %+v", msgs[0])
			}
			// At most one invocation is outstanding: the second is busy or timed out.
			if k := msgs[1].data.(facts.CollectorErrorData).Kind; k != execx.KindBusy && k != execx.KindTimeout {
				t.Fatalf("second kind %q", k)
			}
			break
		}
		select {
		case <-deadline:
			t.Fatalf("only %d messages", len(msgs))
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	<-done
}

func TestARCFromRealArcstats(t *testing.T) {
	c := &ARC{Path: captured + "a.arcstats.txt"}
	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	arc := pub.all()[1].data.(zfs.ARC)
	if arc.SizeBytes == 0 || arc.MaxBytes == 0 {
		t.Fatalf("arc = %+v", arc)
	}
	c = &ARC{Path: filepath.Join(t.TempDir(), "arcstats")}
	if err := c.Collect(context.Background(), pub); !errors.Is(err, ErrNotAvailable) {
		t.Fatalf("missing arcstats: %v", err)
	}
}

func TestEventFollowerPublishesAndPokes(t *testing.T) {
	dir := t.TempDir()
	abs, _ := filepath.Abs("../testdata/zpool-events/zfs-2021-issue-12629-io-ereport.txt")
	script := fmt.Sprintf("#!/bin/sh\ncat %q\necho\nexec sleep 3600\n", abs)
	zpool := testutil.WriteScript(t, dir, "zpool", script)
	pokes := make(chan struct{}, 10)
	f := &EventFollower{Zpool: zpool, Debounce: 10 * time.Millisecond, Poke: func() { pokes <- struct{}{} },
		// The recorded event is from 2021: pretend we started before it.
		Now: func() time.Time { return time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC) }}
	pub := &memPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.Run(ctx, pub) }()
	select {
	case <-pokes:
	case <-time.After(5 * time.Second):
		t.Fatal("no poke after an event")
	}
	msgs := pub.all()
	if len(msgs) != 1 || msgs[0].kind != facts.ZpoolEvent.Name() {
		t.Fatalf("zfsPublished %+v", msgs)
	}
	ev := msgs[0].data.(facts.EventData)
	if ev.Class != "ereport.fs.zfs.io" || ev.Pool != "zroot" || !strings.Contains(ev.VdevPath, "ZHZ54DBW") {
		t.Fatalf("event %+v", ev.Event)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follower returned %v on shutdown", err)
	}
}

func TestEventFollowerSkipsHistory(t *testing.T) {
	dir := t.TempDir()
	abs, _ := filepath.Abs("../testdata/zpool-events/zfs-2021-issue-12629-io-ereport.txt")
	zpool := testutil.WriteScript(t, dir, "zpool", fmt.Sprintf("#!/bin/sh\ncat %q\necho\n", abs))
	f := &EventFollower{Zpool: zpool}
	pub := &memPublisher{}
	err := f.Run(context.Background(), pub)
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("want an exit error for the supervisor to restart, got %v", err)
	}
	if n := len(pub.all()); n != 0 {
		t.Fatalf("zfsPublished %d historic events", n)
	}
}

func findPool(pools []*zfs.Pool, name string) *zfs.Pool {
	for _, p := range pools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// A pulled disk is polled for at once; an ereport storm costs two polls.
func TestDebouncerLeadingEdgeThenOneTrailingCall(t *testing.T) {
	calls, settled := make(chan time.Time, 100), make(chan time.Time, 100)
	const d = 300 * time.Millisecond
	db := newDebouncer(d, func() { calls <- time.Now() }, func() { settled <- time.Now() })
	defer db.stop()

	start := time.Now()
	db.fire()
	select {
	case at := <-calls:
		if lag := at.Sub(start); lag > d/2 {
			t.Fatalf("first call after %s: the first event must poll at once, not after the debounce", lag)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no call after the first fire")
	}
	for i := 0; i < 100; i++ {
		db.fire()
	}
	select {
	case at := <-calls:
		if lag := at.Sub(start); lag < d*8/10 {
			t.Fatalf("trailing call after %s, before the hold of %s ended", lag, d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the storm was not followed by one trailing call")
	}
	select {
	case <-calls:
		t.Fatal("a storm of 100 fires made more than two calls")
	case <-time.After(2 * d):
	}
	if n := len(settled); n != 1 {
		t.Fatalf("settle called %d times for one burst, want 1", n)
	}
	if at := <-settled; at.Sub(start) < 2*d*8/10 {
		t.Fatalf("settled %s after the first fire, before the burst was over", at.Sub(start))
	}
	// Quiet again: the next fire is immediate once more.
	again := time.Now()
	db.fire()
	select {
	case at := <-calls:
		if lag := at.Sub(again); lag > d/2 {
			t.Fatalf("after a quiet spell the call came %s late", lag)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no call after a quiet spell")
	}
}
