package rules

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/zfs"
)

func leafNamed(pools []*zfs.Pool, name string) *zfs.Vdev {
	for _, p := range pools {
		for _, cv := range p.AllVdevs() {
			for _, l := range cv.Vdev.Leaves() {
				if l.Name == name {
					return l
				}
			}
		}
	}
	return nil
}

// The counters come from a real output (ram1 with 47 CKSUM errors); the
// later observations change them by hand, since no real series of one pool
// with rising and cleared counters exists in testdata.
func TestVdevErrorDeltas(t *testing.T) {
	const file = "zpool-status/zol-0.7-mirror-ramdisk-cksum-47-9P.txt"
	names := []string{nameVdevErrors, nameVdevErrorRate}
	e := newTestEngine()
	pools := statusPools(t, file)
	observe(t, e, poolsEnv(t, pools, t0), t0)
	// First sight: nobody has been told of those 47 errors yet, and 47 in
	// one interval is over ZED's 10-in-10-minutes rate.
	sameList(t, active(e, names...), []string{
		"VdevErrorRate critical pool=rtest vdev=ram1",
		"VdevErrors warning pool=rtest vdev=ram1",
	})
	if a := find(e, nameVdevErrors); a.Summary != "ram1 in rtest/mirror-0: 47 checksum errors" || a.Replacement == nil || a.Replacement.TopVdev != "mirror-0" {
		t.Errorf("summary %q repl %+v", a.Summary, a.Replacement)
	}
	cases := []struct {
		name  string
		at    time.Duration
		cksum uint64
		want  []string
		total uint64
	}{
		// The rate window passed with no new errors: the rate alert ends.
		{"steady", 11 * time.Minute, 47, []string{"VdevErrors warning pool=rtest vdev=ram1"}, 47},
		// 3 more: news, sent again.
		{"rise", 12 * time.Minute, 50, []string{"VdevErrors warning pool=rtest vdev=ram1"}, 50},
		// zpool clear: a reset is not an increase, and cleared counters end it.
		{"clear", 13 * time.Minute, 0, nil, 50},
		// 2 new errors after the clear count as 2.
		{"after clear", 14 * time.Minute, 2, []string{"VdevErrors warning pool=rtest vdev=ram1"}, 52},
		// The hold runs out without another increase.
		{"hold over", 14*time.Minute + 25*time.Hour, 2, nil, 52},
	}
	for _, tc := range cases {
		leafNamed(pools, "ram1").ChecksumErrors = tc.cksum
		now := t0.Add(tc.at)
		observe(t, e, poolsEnv(t, pools, now), now)
		e.Tick(now) // unchanged facts are judged again as time passes
		sameList(t, active(e, names...), tc.want)
		if got := vdevErrorsMemory.peek(e.hosts[testHost]).leaves()["rtest/ram1"].Total; got != tc.total {
			t.Errorf("%s: total %d, want %d", tc.name, got, tc.total)
		}
	}
}

func TestVdevErrorRateWindow(t *testing.T) {
	pools := statusPools(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt")
	e := newTestEngine()
	l := leafNamed(pools, "gpt/usb1")
	// 3 errors a minute: the 10th error arrives in minute 4, within 10 minutes.
	for i := 0; i <= 4; i++ {
		l.ReadErrors = uint64(3 * i)
		now := t0.Add(time.Duration(i) * time.Minute)
		observe(t, e, poolsEnv(t, pools, now), now)
		got := find(e, nameVdevErrorRate) != nil
		if want := 3*i >= 10; got != want {
			t.Errorf("minute %d (%d errors): rate alert %v, want %v", i, 3*i, got, want)
		}
	}
}

func TestPoolDataErrorsListsFiles(t *testing.T) {
	e := newTestEngine()
	observe(t, e, statusEnv(t, "zpool-status/freebsd-single-status-v-permanent-errors.txt", t0), t0)
	a := find(e, namePoolDataErrors)
	if a == nil || a.Evidence["files"] == "" || a.Severity != "critical" {
		t.Fatalf("data errors alert: %+v", a)
	}
	t.Logf("%s\n%s", a.Summary, a.Description)
}
