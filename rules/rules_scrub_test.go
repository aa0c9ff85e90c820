package rules

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
)

func TestScrubRules(t *testing.T) {
	names := []string{nameScrubNever, nameScrubOverdue, nameScrubErrors, nameScrubPaused, nameResilver}
	cases := []struct {
		file string
		now  time.Time
		want []string
	}{
		// Scrubbed Sun Jan 8 2012: long overdue by now.
		{"zpool-status/zol-0.7-mirror-ramdisk-cksum-47-9P.txt", t0, []string{"ScrubOverdue warning pool=rtest"}},
		{"zpool-status/freebsd-single-scrub-data-errors-use-v.txt", t0, []string{"ScrubErrors critical pool=ztest", "ScrubOverdue warning pool=ztest"}},
		{"zpool-status/freebsd-handbook-scrub-repaired-cksum-2.72K-MANGLED-WS.txt", t0, []string{"ScrubErrors warning pool=healer", "ScrubOverdue warning pool=healer"}},
		// A scrub running now is not overdue.
		{"zpool-status/freebsd-single-scrub-in-progress.txt", t0, []string{}},
		// No scan line at all.
		{"zpool-status/freebsd-raidz1-gpt-label-online.txt", t0, []string{"ScrubNever warning pool=upool"}},
		{"zpool-status/zol-0.6-mirror-resilver-in-progress-logs-cache-tabs.txt", t0, []string{"Resilver info pool=tank"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			e := newTestEngine(func(c *config.RulesConfig) { c.For = map[string]config.Duration{"ScrubNever": 0} })
			observe(t, e, statusEnv(t, tc.file, tc.now), tc.now)
			sameList(t, active(e, names...), tc.want)
		})
	}
}

// No real output of a paused scrub, nor of one pool first scrubbed then
// resilvered, exists in testdata: the scan is changed by hand.
func TestScrubPausedAndHistory(t *testing.T) {
	pools := statusPools(t, "zpool-status/freebsd-single-scrub-in-progress.txt")
	p := pools[0]
	since := t0.Add(-9 * time.Hour)
	p.Scan.State, p.Scan.PausedSince = "paused", &since
	e := newTestEngine()
	observe(t, e, poolsEnv(t, pools, t0), t0)
	sameList(t, active(e, nameScrubPaused), []string{"ScrubPaused warning pool=" + p.Name})

	// A clean scrub 10 days ago, then a resilver: the scrub is remembered,
	// and overdue 26 days later.
	end := t0.Add(-10 * 24 * time.Hour)
	p.Scan.Function, p.Scan.State, p.Scan.End, p.Scan.Errors, p.Scan.RepairedBytes, p.Scan.PausedSince = "scrub", "finished", &end, 0, 0, nil
	e = newTestEngine()
	observe(t, e, poolsEnv(t, pools, t0), t0)
	p.Scan.Function = "resilver"
	later := t0.Add(26 * 24 * time.Hour)
	observe(t, e, poolsEnv(t, pools, later), later)
	sameList(t, active(e, nameScrubOverdue, nameScrubNever), []string{"ScrubOverdue warning pool=" + p.Name})
}
