package collectors

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/testutil"
)

// A pool that leaves `zpool list` (exported, destroyed, not imported)
// pokes the collectors that look for it; the first poll and an unchanged
// list do not.
func TestZpoolListPokesWhenThePoolsChange(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "listing")
	// The stand-in replays whichever real listing the test points it at.
	zpool := testutil.WriteScript(t, dir, "zpool", fmt.Sprintf("#!/bin/sh\n[ \"$*\" = \"list -Hp\" ] || exit 2\ncat \"$(cat %q)\"\n", state))
	point := func(capture string) {
		abs, _ := filepath.Abs(captured + capture)
		testutil.WriteScript(t, dir, "listing", abs)
	}
	changed := 0
	c := &ZpoolList{Runner: execx.New(5 * time.Second), Zpool: zpool, PoolsChanged: func() { changed++ }}
	poll := func() {
		t.Helper()
		if err := c.Collect(context.Background(), &memPublisher{}); err != nil {
			t.Fatal(err)
		}
	}
	point("h-full.zpool-list-Hp.txt") // dpool fast small vault
	poll()
	poll()
	if changed != 0 {
		t.Fatalf("PoolsChanged called %d times with the same pools", changed)
	}
	point("b1-offline.zpool-list-Hp.txt") // fast vault
	poll()
	if changed != 1 {
		t.Fatalf("PoolsChanged called %d times after dpool and small left, want 1", changed)
	}
	point("f3-draid.zpool-list-Hp.txt") // dpool fast vault: one came back
	poll()
	if changed != 2 {
		t.Fatalf("PoolsChanged called %d times after dpool came back, want 2", changed)
	}
}
