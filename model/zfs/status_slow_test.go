package zfs

import (
	"os"
	"path/filepath"
	"testing"
)

// parseCaptured parses a capture of testdata/captured/zfs-2.3.2 (text or -j).
func parseCaptured(t *testing.T, name string) *Pool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoTestdata, "captured", "zfs-2.3.2", name))
	if err != nil {
		t.Fatal(err)
	}
	pools, err := ParseStatus(data)
	if err != nil || len(pools) != 1 {
		t.Fatalf("%s: %d pools, %v", name, len(pools), err)
	}
	return pools[0]
}

// Capture l5: mirror kslow with virtio-ZWV0003 throttled and
// zio_slow_io_ms at 100 ms. Every form says 16 slow I/Os on ZWV0003 and
// none on ZWV0004: the SLOW column of -s (with and without -p, which
// prints 0 instead of "-" for the interior vdevs) and slow_ios of -j, which
// 2.3.2 prints for every leaf with or without -s.
func TestStatusSlowIOsOfTheThrottledDisk(t *testing.T) {
	for _, tc := range []struct {
		file, slow, fast string
		interior         bool // the interior vdevs carry a number
	}{
		{"l5-slow.zpool-status-s.txt", "virtio-ZWV0003", "virtio-ZWV0004", false},
		{"l5-slow.zpool-status-s-p-P-v.txt", "/dev/disk/by-id/virtio-ZWV0003-part1", "/dev/disk/by-id/virtio-ZWV0004-part1", true},
		{"l5-slow.zpool-status-s-j.json", "/dev/disk/by-id/virtio-ZWV0003-part1", "/dev/disk/by-id/virtio-ZWV0004-part1", false},
		{"l5-slow.zpool-status-j-no-s.json", "/dev/disk/by-id/virtio-ZWV0003-part1", "/dev/disk/by-id/virtio-ZWV0004-part1", false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := parseCaptured(t, tc.file)
			for name, want := range map[string]uint64{tc.slow: 16, tc.fast: 0} {
				v := mustVdev(t, p, name)
				if v.SlowIOs == nil || *v.SlowIOs != want {
					t.Errorf("%s: slow I/Os %v, want %d", name, v.SlowIOs, want)
				}
				if v.ReadErrors+v.WriteErrors+v.ChecksumErrors != 0 || v.State != StateOnline {
					t.Errorf("%s: %+v", name, v)
				}
			}
			if m := mustVdev(t, p, "mirror-0"); (m.SlowIOs != nil) != tc.interior {
				t.Errorf("mirror-0 slow I/Os %v", m.SlowIOs)
			}
		})
	}
	// Without -s the text has no column and no counter: unknown, not 0.
	for _, l := range parseCaptured(t, "l5-slow.zpool-status-p-P-v.txt").Vdevs[0].Leaves() {
		if l.SlowIOs != nil {
			t.Errorf("%s: slow I/Os %d without -s", l.Name, *l.SlowIOs)
		}
	}
	// Before the throttle, and after the deadman step (l6: 24).
	if v := mustVdev(t, parseCaptured(t, "l5-before.zpool-status-s.txt"), "virtio-ZWV0003"); v.SlowIOs == nil || *v.SlowIOs != 0 {
		t.Errorf("before: %v", v.SlowIOs)
	}
	if v := mustVdev(t, parseCaptured(t, "l6-deadman-continue.zpool-status-s.txt"), "virtio-ZWV0003"); v.SlowIOs == nil || *v.SlowIOs != 24 {
		t.Errorf("l6: %v", v.SlowIOs)
	}
}
