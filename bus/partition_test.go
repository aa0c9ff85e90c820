package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The partition a host's facts are stored under is computed by the NATS
// server's transform; PartitionOf must give the same number, or readers
// would look in the wrong place and engines would load the wrong hosts.
func TestPartitionOfAgreesWithTheServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: t.TempDir(), Partitions: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if n, err := b.Partitions(ctx); err != nil || n != 7 {
		t.Fatalf("Partitions = %d, %v; want 7", n, err)
	}
	hosts := []string{"nas1", "nas.example.com", "NAS-2", "x", "zw_srv-a", "ünï", "host0042"}
	for i := 0; i < 200; i++ {
		hosts = append(hosts, fmt.Sprintf("host%04d", i))
	}
	st, err := b.JS.Stream(ctx, StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, h := range hosts {
		published := Subject(h, "heartbeat")
		if _, err := b.JS.Publish(ctx, published, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		filter, err := b.FactFilter(ctx, published)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.GetLastMsgForSubject(ctx, filter)
		if err != nil {
			t.Fatalf("%s: no message under %s (PartitionOf says %d): %v", h, filter, PartitionOf(h, 7), err)
		}
		p := PartitionOf(h, 7)
		seen[p] = true
		if want := fmt.Sprintf("zwatch.%d.v1.%s.heartbeat", p, Token(h)); m.Subject != want {
			t.Errorf("%s stored as %s, want %s", h, m.Subject, want)
		}
		if got := Canonical(m.Subject); got != published {
			t.Errorf("Canonical(%s) = %s, want %s", m.Subject, got, published)
		}
		if got, ok := HostOf(m.Subject); !ok || got != Token(h) {
			t.Errorf("HostOf(%s) = %q %v", m.Subject, got, ok)
		}
	}
	if len(seen) != 7 {
		t.Errorf("207 hosts fell into %d of 7 partitions", len(seen))
	}
	// Every partition's filter sees its own hosts and no other's.
	for p := 0; p < 7; p++ {
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(PartitionFilter(p)))
		if err != nil {
			t.Fatal(err)
		}
		for subj := range info.State.Subjects {
			if h, _ := HostOf(subj); PartitionOf(h, 7) != p {
				t.Errorf("partition %d's filter holds %s", p, subj)
			}
		}
	}
}

func TestCanonicalAndStoredFilter(t *testing.T) {
	for in, want := range map[string]string{
		"zwatch.7.v1.nas1.zpool.status": "zwatch.v1.nas1.zpool.status",
		"zwatch.v1.nas1.zpool.status":   "zwatch.v1.nas1.zpool.status",
		"zwatch.v1.7.heartbeat":         "zwatch.v1.7.heartbeat", // a host named 7
		"zwatch.12x.v1.nas1.heartbeat":  "zwatch.12x.v1.nas1.heartbeat",
		"zwatch..v1.nas1":               "zwatch..v1.nas1",
		"other.7.v1.nas1":               "other.7.v1.nas1",
		"zwatch.7":                      "zwatch.7",
	} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
	if got := StoredFilter("zwatch.v1.*.heartbeat", 64); got != "zwatch.*.v1.*.heartbeat" {
		t.Errorf("wildcard host: %s", got)
	}
	if got := StoredFilter("zwatch.v1.nas1.smart.>", 64); got != fmt.Sprintf("zwatch.%d.v1.nas1.smart.>", PartitionOf("nas1", 64)) {
		t.Errorf("one host: %s", got)
	}
	if got := StoredFilter("zwatch.v1.nas1.heartbeat", 1); got != "zwatch.v1.nas1.heartbeat" {
		t.Errorf("unpartitioned: %s", got)
	}
}

// An existing stream's partition count is kept: a server with another
// count gets an error naming the setting, one with none adopts it, and an
// unpartitioned stream is partitioned on request (the upgrade).
func TestPartitionCountOfAnExistingStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	open := func(n int) (*Bus, error) {
		return Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: dir, Partitions: n}, nil)
	}
	b, err := open(0)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Partitions(ctx); n != 1 {
		t.Fatalf("new stream without a count: %d partitions, want 1", n)
	}
	b.Close()
	if b, err = open(16); err != nil {
		t.Fatalf("partitioning an unpartitioned stream: %v", err)
	}
	if n, _ := FactPartitions(ctx, b.JS); n != 16 {
		t.Fatalf("after the upgrade: %d partitions, want 16", n)
	}
	b.Close()
	for _, n := range []int{1, 8, 32} {
		b, err := open(n)
		if err == nil {
			b.Close()
			t.Fatalf("fleet.partitions %d on a 16-partition stream: no error", n)
		}
		if !errors.Is(err, ErrPartitionsDiffer) || !strings.Contains(err.Error(), "fleet.partitions: 16") {
			t.Errorf("fleet.partitions %d: %v", n, err)
		}
	}
	if b, err = open(0); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if n, _ := b.Partitions(ctx); n != 16 {
		t.Errorf("a process without a count: %d partitions, want the stream's 16", n)
	}
}
