package collectors

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
)

// burstEvents builds n ereports from the real ereport.fs.zfs.data events of
// the suspended pool captured on OpenZFS 2.3.2 (testdata/kstat): the 115
// captured blocks, verbatim, repeated in order until there are n. Only the
// repetition is made up; a suspended pool posts one per failed block.
func burstEvents(t testing.TB, n int) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/kstat/zfs-2.3.2/suspended.zpool-events-Hv.txt")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, blk := range strings.SplitAfter(string(b), "\n\n") {
		if strings.Contains(blk, "\tereport.fs.zfs.data\n") {
			blocks = append(blocks, blk)
		}
	}
	if len(blocks) != 115 {
		t.Fatalf("%d data ereports in the capture, want 115", len(blocks))
	}
	var out bytes.Buffer
	for i := 0; i < n; i++ {
		out.WriteString(blocks[i%len(blocks)])
	}
	return out.Bytes()
}

// A burst of 5000 identical ereports (a suspended pool's failed writes)
// costs one status poll and one list poll, is published as one event, and
// the follower keeps up: the burst is read and its lag logged in one line.
func TestEventBurstCostsOnePoll(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events")
	if err := os.WriteFile(events, burstEvents(t, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	zpool := testutil.WriteScript(t, dir, "zpool", fmt.Sprintf("#!/bin/sh\ncat %q\nexec sleep 3600\n", events))
	var polls, settles atomic.Int32
	var logs syncBuffer
	f := &EventFollower{Zpool: zpool, Debounce: 200 * time.Millisecond,
		Poke: func() { polls.Add(1) }, Settled: func() { settles.Add(1) },
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
		// The capture is from 13:06 UTC on 2026-12-01: follow from before it.
		Now: func() time.Time { return time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC) }}
	pub := &memPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	start := time.Now()
	go func() { done <- f.Run(ctx, pub) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "zpool events burst") {
		if time.Now().After(deadline) {
			t.Fatalf("no burst line within 20 s; log:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	time.Sleep(500 * time.Millisecond) // anything late would show now
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("5000 ereports: %d published, %d status polls, %d list polls, burst line after %s: %s",
		len(pub.all()), polls.Load(), settles.Load(), took.Round(time.Millisecond), strings.TrimSpace(logs.String()))
	if n := len(pub.all()); n != 1 {
		t.Errorf("%d events published, want the first of the identical burst only", n)
	}
	if p, s := polls.Load(), settles.Load(); p != 1 || s != 1 {
		t.Errorf("%d status polls and %d list polls, want one each", p, s)
	}
	line := logs.String()
	for _, want := range []string{"events=5000", "published=1", "folded=4999", "max_lag="} {
		if !strings.Contains(line, want) {
			t.Errorf("burst line lacks %s: %s", want, line)
		}
	}
}

// syncBuffer is a bytes.Buffer a logger and the test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
