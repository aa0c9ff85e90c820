package silence

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// Silences act where the rule engine's alert pipeline (rules/pipeline)
// decides that an alert is due: a firing alert an active silence mutes is
// not due, so it leaves its group's notification as Alertmanager removes
// silenced alerts from a group. Its page is then never sent, and an alert
// never paged vanishes without a resolved notice; one paged before the
// silence still gets its resolved notice (the person saw the page). A rise
// above the silence's MaxSeverity is not muted. When the silence ends,
// what still fires is due again by the usual rules: a page never sent goes
// now, a repeat when its interval has passed since the last one.

// ExpiredAlert names the one-line info notice sent when a silence ends by
// itself.
const ExpiredAlert = "SilenceExpired"

// MutedBy returns the silence of list that keeps alert a from being sent
// at now; pool and serial are the pool and disk the engine joined it to.
func MutedBy(list []Silence, a *alert.Alert, pool, serial string, now time.Time) *Silence {
	for i := range list {
		s := &list[i]
		if s.Mutes(func(name string) string { return Label(a, pool, serial, name) }, a.Severity, now) {
			return s
		}
	}
	return nil
}

// Label is a label as silences see it: the alert's own labels, plus
// severity, and the pool and serial of a disk the engine joined to a pool
// (a SMART alert carries only its disk label).
func Label(a *alert.Alert, pool, serial, name string) string {
	if v := a.Labels[name]; v != "" {
		return v
	}
	switch name {
	case "severity":
		return string(a.Severity)
	case "pool":
		return pool
	case "serial":
		return serial
	case "incident":
		return a.Incident
	}
	return ""
}

// Held is a firing alert, not inhibited, that an expiry notice may name.
type Held struct {
	Host         string
	Alert        *alert.Alert
	Pool, Serial string
}

// maxNamedInNotice bounds the alerts an expiry notice names.
const maxNamedInNotice = 5

// ExpiryNotice is the notice that s ended by itself: one info alert whose
// summary says which alerts it silenced still fire and so page again.
// firing are the candidates, in the order to name them; host is the host
// whose subject carries the notice when no alert names one.
func ExpiryNotice(s *Silence, host string, firing []Held, test bool, now time.Time) alert.Notification {
	var still []string
	for _, f := range firing {
		if f.Alert.Severity.Rank() > s.MaxSeverity.Rank() ||
			!s.Matchers.Matches(func(n string) string { return Label(f.Alert, f.Pool, f.Serial, n) }) {
			continue
		}
		if host == "" {
			host = f.Host
		}
		still = append(still, f.Alert.Name+" on "+f.Host+aboutShort(f.Alert.Labels))
	}
	line := fmt.Sprintf("silence %s for %s expired; ", s.Short(), s.Matchers)
	switch {
	case len(still) == 0:
		line += "no alert it silenced still fires"
	case len(still) > maxNamedInNotice:
		line += fmt.Sprintf("alerts that still fire page again: %s and %d more", strings.Join(still[:maxNamedInNotice], ", "), len(still)-maxNamedInNotice)
	default:
		line += "alerts that still fire page again: " + strings.Join(still, ", ")
	}
	labels := map[string]string{"alertname": ExpiredAlert, "host": host, "silence": s.ID}
	a := alert.Alert{
		Name: ExpiredAlert, Severity: alert.Info, State: alert.Firing, Labels: labels,
		Fingerprint: alert.Fingerprint(labels), Summary: line, StartsAt: s.EndsAt.UTC(),
	}
	return alert.Notification{ID: NoticeID(s.ID), Host: host, Status: alert.Firing, Alerts: []alert.Alert{a}, Created: now.UTC(), Test: test}
}

// NoticeID is the notification ID of a silence's expiry notice: the same
// for every try, so the outbox drops a second copy.
func NoticeID(id string) string { return "silence-expired-" + id }

// aboutShort is " (pool=tank, vdev=sdb)" for the labels that say what an
// alert is about, or "".
func aboutShort(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if k != "alertname" && k != "host" && l[k] != "" {
			parts = append(parts, k+"="+l[k])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
