package rules

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

func firingAlert(name, incident string, sev alert.Severity, since time.Time, evidence map[string]string) alert.Alert {
	return alert.Alert{Name: name, Incident: incident, Severity: sev, State: alert.Firing, StartsAt: since, Evidence: evidence,
		Labels: map[string]string{"alertname": name, "host": "nas1"}, Fingerprint: name + incident}
}

// The case: one raidz2 disk OFFLINE (PoolState, RedundancyMargin,
// VdevState, one incident) came after two blind-spot warnings that were
// older. Data at risk comes first, whatever the age; then severity, then
// the least redundancy left.
func TestIncidentsRanked(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	alerts := []alert.Alert{
		firingAlert(nameBlindSpot, "b1b1b1b1", alert.Warning, t0, nil),
		firingAlert(nameBlindSpot, "b2b2b2b2", alert.Warning, t0, nil),
		firingAlert(nameSnapshotStale, "5a5a5a5a", alert.Critical, t0, nil),
		firingAlert(namePoolState, "3f2a9c1e", alert.Warning, t0.Add(time.Hour), nil),
		firingAlert(nameRedundancy, "3f2a9c1e", alert.Warning, t0.Add(time.Hour), map[string]string{"margin": "1"}),
		firingAlert(nameVdevState, "3f2a9c1e", alert.Warning, t0.Add(time.Hour), nil),
		firingAlert(nameRedundancy, "0c0c0c0c", alert.Warning, t0.Add(2*time.Hour), map[string]string{"margin": "0"}),
		{Name: nameSmartTemperature, Incident: "7e7e7e7e", Severity: alert.Critical, State: alert.Resolved, StartsAt: t0},
	}
	got := Incidents(alerts)
	var ids []string
	for _, in := range got {
		ids = append(ids, in.ID)
	}
	want := []string{"0c0c0c0c", "3f2a9c1e", "5a5a5a5a", "b1b1b1b1", "b2b2b2b2", "7e7e7e7e"}
	if len(ids) != len(want) {
		t.Fatalf("incidents %v, want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("incidents %v, want %v (no redundancy left first, then the disk's pool, then upkeep, resolved last)", ids, want)
		}
	}
	pool := got[1]
	if len(pool.Alerts) != 3 || !pool.AtRisk || pool.Margin != 1 || pool.Severity != alert.Warning || !pool.Since.Equal(t0.Add(time.Hour)) {
		t.Errorf("the pool's incident: %+v", pool)
	}
	if got[2].AtRisk || got[5].Firing {
		t.Errorf("upkeep or resolved incidents: %+v %+v", got[2], got[5])
	}
	// An alert without an incident is its own.
	solo := Incidents([]alert.Alert{firingAlert(nameSmartFailed, "", alert.Critical, t0, nil), firingAlert(nameSmartCRC, "", alert.Warning, t0, nil)})
	if len(solo) != 2 || solo[0].Alerts[0].Name != nameSmartFailed {
		t.Errorf("alerts without incidents: %+v", solo)
	}
}
