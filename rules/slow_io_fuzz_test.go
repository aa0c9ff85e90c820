package rules

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/zfs"
)

// The event fields SlowIO and IOHung read (ena, zio_timestamp, zio_delta)
// come from the kernel as text: whatever they hold, the age read from them
// is within the bound the ENA can tell, or not read at all, and nothing
// panics.
func FuzzDeadmanFields(f *testing.F) {
	// ena and zio_timestamp of the io ereport of openzfs/zfs#12629
	// (testdata/zpool-events/zfs-2021-issue-12629-io-ereport.txt).
	f.Add("0x150e03af8dd01001", "0x150e03a5d84", "0x74d2")
	f.Add("0x0", "0x0", "")
	f.Add("0xffffffffffffffff", "1", "0x")
	f.Add("12", "-3", "junk")
	f.Fuzz(func(t *testing.T, ena, issued, delta string) {
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		ev := zfs.Event{Time: at, Class: "ereport.fs.zfs.deadman", Pool: "p", VdevPath: "/dev/sdb",
			Fields: map[string]string{"ena": ena, "zio_timestamp": issued, "zio_delta": delta}}
		var k kernelClock
		k.learn(&ev)
		if age, ok := k.ioAge(&ev); ok {
			if age <= 0 || age > 4*time.Hour {
				t.Fatalf("age %s read from ena %q zio_timestamp %q", age, ena, issued)
			}
		}
		h := newHostState("h")
		noteDeadman(h, &ev, 6*time.Hour, at)
		noteDelay(h, &ev, at)
	})
}
