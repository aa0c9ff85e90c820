package web

import (
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/views/statusview"
)

func TestSummarySaysWhatIsWrongFirst(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	heard := now.Add(-2 * time.Hour)
	zero := 0
	online := statusview.Pool{Name: "fast", State: "ONLINE"}
	for name, tc := range map[string]struct {
		host    statusview.Host
		want    string
		healthy bool
	}{
		"healthy":  {statusview.Host{Host: "nas1", Pools: []statusview.Pool{online}}, "All pools healthy", true},
		"no pools": {statusview.Host{Host: "nas1"}, "No pools on nas1", true},
		"silent": {statusview.Host{Host: "nas2", Silent: true, LastHeartbeat: &heard, Pools: []statusview.Pool{online}},
			"nas2 is silent: last heard 2h ago", false},
		"degraded": {statusview.Host{Host: "nas1", Pools: []statusview.Pool{online, {Name: "tank", State: "DEGRADED", Margin: &zero, MarginText: "can lose 0 more disks", DataErrors: 3}},
			Alerts: []alert.Alert{{Name: redundancyAlert, State: alert.Firing, Labels: map[string]string{"pool": "tank", "vdev": "mirror-0"}, Evidence: map[string]string{"margin": "0"}}}},
			"tank DEGRADED: mirror-0 can lose 0 more disks, 3 data errors", false},
		"failing disk": {statusview.Host{Host: "nas1", Pools: []statusview.Pool{online}, Disks: []statusview.Disk{{Serial: "WD-1", Health: "failing"}}},
			"disk WD-1 fails its SMART health check", false},
		"alerts only": {statusview.Host{Host: "nas1", Pools: []statusview.Pool{online}, Alerts: []alert.Alert{{State: alert.Firing}, {State: alert.Pending}, {State: alert.Firing}}},
			"2 alerts firing", false},
		"silenced alerts": {statusview.Host{Host: "nas1", Pools: []statusview.Pool{online}, Alerts: []alert.Alert{{State: alert.Firing, Silenced: &alert.Silenced{ID: "x"}}, {State: alert.Firing}}},
			"2 alerts firing (1 silenced)", false},
	} {
		got, healthy := summary(tc.host, now)
		if got != tc.want || healthy != tc.healthy {
			t.Errorf("%s: %q %v, want %q %v", name, got, healthy, tc.want, tc.healthy)
		}
	}
}

func TestBlindSpots(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	recent, old := now.Add(-time.Minute), now.Add(-time.Hour)
	got := blindSpots(statusview.Host{Collectors: map[string]facts.CollectorHealth{
		"arc":          {Disabled: "no /proc/spl/kstat/zfs/arcstats"},
		"smart":        {Interval: time.Minute, LastOK: &old, LastError: "smartctl: not found"},
		"zpool_list":   {Interval: time.Minute, LastOK: &old},
		"zpool_status": {Interval: time.Minute, LastOK: &recent},
		"zpool_events": {},
	}}, now)
	want := []string{"arc is off: no /proc/spl/kstat/zfs/arcstats", "smart fails: smartctl: not found",
		"zpool_events has not succeeded yet", "zpool_list last succeeded 1h ago"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("blind spots\n%q\nwant\n%q", got, want)
	}
}
