package collectors

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
)

// A pool coming or going pokes PoolChanged once, after the pool events
// have been quiet for poolSettle; other events do not.
func TestEventFollowerPokesOnPoolEvents(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		pokes   int
	}{
		{"zfs-0.8-issue-10612-pool-create.txt", 1},
		{"zfs-2021-issue-12629-io-ereport.txt", 0},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			abs, _ := filepath.Abs("../testdata/zpool-events/" + tc.fixture)
			zpool := testutil.WriteScript(t, t.TempDir(), "zpool", fmt.Sprintf("#!/bin/sh\ncat %q\necho\nexec sleep 3600\n", abs))
			pooled := make(chan time.Time, 10)
			statused := make(chan struct{}, 10)
			f := &EventFollower{Zpool: zpool, Debounce: 10 * time.Millisecond,
				Poke:        func() { statused <- struct{}{} },
				PoolChanged: func() { pooled <- time.Now() },
				// The recorded events are from 2020/2021: pretend we started before them.
				Now: func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			start := time.Now()
			go func() { done <- f.Run(ctx, &memPublisher{}) }()
			select {
			case <-statused:
			case <-time.After(5 * time.Second):
				t.Fatal("no status poke")
			}
			// A loaded machine may be late; one poke is waited for long,
			// a second one a while after it.
			patience := poolSettle + 8*time.Second
			if tc.pokes == 0 {
				patience = poolSettle + 2*time.Second
			}
			wait := time.After(patience)
			got := 0
		loop:
			for {
				select {
				case at := <-pooled:
					got++
					if at.Sub(start) < poolSettle*8/10 {
						t.Errorf("PoolChanged after %s, before the events settled", at.Sub(start))
					}
					wait = time.After(poolSettle + time.Second)
				case <-wait:
					break loop
				}
			}
			cancel()
			<-done
			if got != tc.pokes {
				t.Fatalf("PoolChanged called %d times, want %d", got, tc.pokes)
			}
		})
	}
}
