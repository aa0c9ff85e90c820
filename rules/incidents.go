package rules

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Incident is the alerts of one incident (alert.Alert.Incident, the
// notification group; an alert without one is its own), for the page and
// `zwatch alerts`, which show incidents as the notifications do: one card,
// one guide, worst first.
type Incident struct {
	ID     string
	Alerts []alert.Alert // the worst first
	// Severity is the worst of its firing alerts (of all, when none fires).
	Severity alert.Severity
	Firing   bool
	// AtRisk: some alert says data is at risk now, not that monitoring
	// or upkeep lags (upkeepAlerts).
	AtRisk bool
	// Margin is the least redundancy left its RedundancyMargin alerts
	// report; -1 when none does.
	Margin int
	Since  time.Time
}

// upkeepAlerts tell of monitoring or upkeep that lags, not of data at risk
// now: a page keeps them below the faults (issue: two blind-spot warnings
// listed above a pool's OFFLINE disk).
var upkeepAlerts = map[string]bool{
	nameBlindSpot: true, nameCollectorStale: true, nameSnapshotStale: true, nameSnapshotCount: true, nameSnapshotSpace: true,
	nameReplicationStale: true, nameScrubNever: true, nameScrubOverdue: true, nameScrubPaused: true, nameARCHitRatio: true,
	nameZFSVersionMismatch: true,
}

// Incidents groups alerts into incidents, ranked: firing before the rest,
// data at risk before upkeep, then the worst severity, the least
// redundancy left, and the oldest.
func Incidents(alerts []alert.Alert) []Incident {
	byID := map[string]*Incident{}
	var order []string
	for _, a := range sorted(alerts) {
		id := a.Incident
		if id == "" {
			id = "alert:" + a.Fingerprint + a.Name
		}
		in := byID[id]
		if in == nil {
			in = &Incident{ID: a.Incident, Margin: -1, Since: a.StartsAt}
			byID[id] = in
			order = append(order, id)
		}
		in.add(a)
	}
	out := make([]Incident, 0, len(order))
	for _, id := range order {
		in := byID[id]
		if in.Severity == "" {
			for _, a := range in.Alerts {
				if a.Severity.Rank() > in.Severity.Rank() {
					in.Severity = a.Severity
				}
			}
		}
		out = append(out, *in)
	}
	slices.SortStableFunc(out, compareIncidents)
	return out
}

func (in *Incident) add(a alert.Alert) {
	in.Alerts = append(in.Alerts, a)
	if a.State == alert.Firing {
		in.Firing = true
		if a.Severity.Rank() > in.Severity.Rank() {
			in.Severity = a.Severity
		}
	}
	if !upkeepAlerts[a.Name] {
		in.AtRisk = true
	}
	if a.Name == nameRedundancy {
		if m, err := strconv.Atoi(a.Evidence["margin"]); err == nil && (in.Margin < 0 || m < in.Margin) {
			in.Margin = m
		}
	}
	if a.StartsAt.Before(in.Since) {
		in.Since = a.StartsAt
	}
}

func compareIncidents(a, b Incident) int {
	if c := cmpTrue(a.Firing, b.Firing); c != 0 {
		return c
	}
	if c := cmpTrue(a.AtRisk, b.AtRisk); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Severity.Rank(), a.Severity.Rank()); c != 0 {
		return c
	}
	if c := cmp.Compare(marginKey(a.Margin), marginKey(b.Margin)); c != 0 {
		return c
	}
	return a.Since.Compare(b.Since)
}

// cmpTrue orders true first.
func cmpTrue(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// marginKey puts an unknown margin after every known one.
func marginKey(m int) int {
	if m < 0 {
		return 1 << 30
	}
	return m
}
