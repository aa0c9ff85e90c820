package web_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// Replayed history: the recorded SMART reports and zpool list, published
// as if read every replayStep over the replayed span before now. The span
// crosses a midnight: Query shows raw points only after the first whole
// day it holds.
const (
	replayStep  = time.Hour
	replaySteps = 48
)

// startHistory opens the real history store on b and runs its writer, then
// replays the recorded readings of host at earlier times so that the plots
// have points; it returns once the store holds them all.
func startHistory(t testing.TB, ctx context.Context, b *bus.Bus, host string) *history.Store {
	t.Helper()
	hc := config.DefaultHistory()
	hc.MaxMB = 8 // the test bus's store is bounded by the temp filesystem
	st, err := history.Open(ctx, b.JS, hc, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = st.Run(rctx) })
	t.Cleanup(func() { stop(); wg.Wait() })

	dir := viewtest.Captured()
	list, err := zfs.ParseList(bytes.NewReader(readFile(t, filepath.Join(dir, "b1-offline.zpool-list-Hp.txt"))))
	if err != nil {
		t.Fatal(err)
	}
	var reports []*smart.Report
	for _, f := range viewtest.SmartFiles {
		rep, err := smart.Parse(bytes.NewReader(readFile(t, filepath.Join(dir, f))))
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		reports = append(reports, rep)
	}
	start := time.Now().Add(-replaySteps * replayStep)
	publishAt := func(i int) {
		at := start.Add(time.Duration(i) * replayStep)
		pub := &collectors.BusPublisher{Bus: b, Host: host, Now: func() time.Time { return at }}
		if err := pub.Publish(ctx, facts.ZpoolCapacity.Name(), "zpool_list", facts.CapacityData{Pools: list}); err != nil {
			t.Fatal(err)
		}
		for _, rep := range reports {
			if err := pub.Publish(ctx, facts.Smart.Name(), "smart", rep, rep.Serial); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The writer starts at each subject's newest fact: wait until it has
	// taken the first before replaying the rest, so none is passed over.
	publishAt(0)
	for {
		sources, err := st.Sources(ctx, host)
		if err == nil && len(sources) > len(reports) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the history writer took no fact: %v %v", sources, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 1; i < replaySteps; i++ {
		publishAt(i)
	}
	waitPoints(t, ctx, st, host, replaySteps/2-3)
	return st
}

// waitPoints waits until the pool vault and the WD disk have n points.
func waitPoints(t testing.TB, ctx context.Context, st *history.Store, host string, n int) {
	t.Helper()
	for {
		pool, perr := st.Query(ctx, host, "pool/vault", time.Now().Add(-48*time.Hour), time.Now())
		disk, derr := st.Query(ctx, host, "disk/WD-WCC7K0000001", time.Now().Add(-48*time.Hour), time.Now())
		if perr == nil && derr == nil && len(pool.Times) >= n && len(disk.Times) >= n {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("history holds %d and %d points (%v, %v), want %d", len(pool.Times), len(disk.Times), perr, derr, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
