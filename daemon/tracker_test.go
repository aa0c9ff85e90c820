package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/zwatch/zwatch/collectors"
)

// discardPublisher takes what a collector publishes; the tracker is under test here.
type discardPublisher struct{ n int }

func (p *discardPublisher) Publish(context.Context, string, string, any, ...string) error {
	p.n++
	return nil
}

func TestTrackerCountsRunsErrorsAndDuration(t *testing.T) {
	tr := newTracker()
	ctx := context.Background()
	pub := &discardPublisher{}
	good := tracked{Collector: &collectors.ARC{Path: filepath.Join("..", "testdata", "captured", "zfs-2.3.2", "a.arcstats.txt")}, t: tr}
	tr.register("arc", 0, "")
	for range 2 {
		if err := good.Collect(ctx, pub); err != nil {
			t.Fatalf("real arcstats: %v", err)
		}
	}
	h := tr.snapshot()["arc"]
	if h.Runs != 2 || h.Errors != 0 || h.LastOK == nil || h.LastDuration <= 0 {
		t.Fatalf("after two good runs: %+v", h)
	}

	// go.mod is no arcstats: a parse error is a failed run.
	bad := tracked{Collector: &collectors.ARC{Path: filepath.Join("..", "go.mod")}, t: tr}
	if err := bad.Collect(ctx, pub); err == nil {
		t.Fatal("go.mod read as arcstats")
	}
	h = tr.snapshot()["arc"]
	if h.Runs != 3 || h.Errors != 1 || h.LastError == "" {
		t.Fatalf("after a failed run: %+v", h)
	}

	// A source missing here is a blind spot, not a failure.
	gone := tracked{Collector: &collectors.ARC{Path: filepath.Join(t.TempDir(), "arcstats")}, t: tr}
	_ = gone.Collect(ctx, pub)
	if h = tr.snapshot()["arc"]; h.Disabled == "" || h.Errors != 1 || h.Runs != 3 {
		t.Fatalf("missing source counted as a run or error: %+v", h)
	}
}
