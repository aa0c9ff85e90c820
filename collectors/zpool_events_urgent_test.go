package collectors

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
)

// The checksum ereports of a real scrub (j4) name the Samsung SSD: its
// SMART is asked for at the first of them; the three repeats within the
// fold window are the same news. Pool, history and scrub events name no
// disk and ask nothing. (The smart collector bounds what is left, once per
// disk per smart.urgent_min_interval.)
func TestEventFollowerAsksSMARTOfTheDiskAnEventNames(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    []string
	}{
		{"../testdata/captured/zfs-2.3.2/j4-errors.zpool-events-v.txt", []string{"/dev/disk/by-id/ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003-part1"}},
		{"../testdata/zpool-events/zfs-2021-issue-12629-io-ereport.txt", []string{"/dev/disk/by-id/ata-ST10000NM0568-2H5110_ZHZ54DBW-part1"}},
		{"../testdata/zpool-events/zfs-0.8-issue-10612-pool-create.txt", nil},
		// l5: 16 delay events of the throttled disk, folded into one.
		{"../testdata/captured/zfs-2.3.2/l5-slow.zpool-events-v.txt", []string{"/dev/disk/by-id/virtio-ZWV0003-part1"}},
		// l6: its deadman and delay events, one of each class.
		{"../testdata/captured/zfs-2.3.2/l6-deadman-continue.zpool-events-v.txt", []string{"/dev/disk/by-id/virtio-ZWV0003-part1", "/dev/disk/by-id/virtio-ZWV0003-part1"}},
	} {
		t.Run(filepath.Base(tc.fixture), func(t *testing.T) {
			abs, _ := filepath.Abs(tc.fixture)
			zpool := testutil.WriteScript(t, t.TempDir(), "zpool", fmt.Sprintf("#!/bin/sh\ncat %q\necho\nexec sleep 3600\n", abs))
			var mu sync.Mutex
			var asked []string
			statused := make(chan struct{}, 100)
			f := &EventFollower{Zpool: zpool, Debounce: 10 * time.Millisecond,
				Poke: func() { statused <- struct{}{} },
				Urgent: func(target string) {
					mu.Lock()
					asked = append(asked, target)
					mu.Unlock()
				},
				// The recorded events are old: pretend we started before them.
				Now: func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- f.Run(ctx, &memPublisher{}) }()
			select {
			case <-statused:
			case <-time.After(5 * time.Second):
				t.Fatal("no status poke")
			}
			// The rest of the file: until the asks expected have come (a
			// loaded machine is slow), then a while for any extra one.
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				mu.Lock()
				n := len(asked)
				mu.Unlock()
				if n >= len(tc.want) {
					break
				}
			}
			time.Sleep(300 * time.Millisecond)
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(asked, tc.want) {
				t.Errorf("asked %q, want %q", asked, tc.want)
			}
		})
	}
}
