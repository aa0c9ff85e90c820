package rules

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/zwatch/zwatch/model/alert"
)

// AlertJSON is one alert in `zwatch rules eval --json` and `zwatch alerts
// --json` output; docs/alert-schema.md describes it.
type AlertJSON struct {
	Name        string            `json:"name"`
	Severity    alert.Severity    `json:"severity"`
	State       alert.State       `json:"state"`
	Labels      map[string]string `json:"labels"`
	Summary     string            `json:"summary"`
	Description string            `json:"description"`
}

// AlertsJSON is the document: {"alerts": [...]}.
type AlertsJSON struct {
	Alerts []AlertJSON `json:"alerts"`
}

// ToJSON converts alerts to their JSON form, worst first.
func ToJSON(alerts []alert.Alert) AlertsJSON {
	out := AlertsJSON{Alerts: []AlertJSON{}}
	for _, a := range sorted(alerts) {
		out.Alerts = append(out.Alerts, AlertJSON{Name: a.Name, Severity: a.Severity, State: a.State, Labels: a.Labels, Summary: a.Summary, Description: a.Description})
	}
	return out
}

// RenderAlertsJSON writes the JSON form, indented.
func RenderAlertsJSON(w io.Writer, alerts []alert.Alert) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ToJSON(alerts)); err != nil {
		return fmt.Errorf("write alerts: %w", err)
	}
	return nil
}

// RenderAlerts writes a table for people: severity, state, incident, name,
// what it is about, and the one-line summary; incidents ranked as the page
// ranks them (Incidents), each one's alerts together, the worst first.
func RenderAlerts(w io.Writer, alerts []alert.Alert) error {
	if len(alerts) == 0 {
		_, err := fmt.Fprintln(w, "no alerts")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEVERITY\tSTATE\tINCIDENT\tALERT\tON\tSUMMARY")
	var rows []alert.Alert
	for _, in := range Incidents(alerts) {
		rows = append(rows, in.Alerts...)
	}
	for _, a := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s%s%s\n", a.Severity, a.State, cmp.Or(a.Incident, "-"), a.Name, about(a.Labels), a.Summary,
			AckNote(a.Ack), SilencedNote(a.Silenced))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write alerts: %w", err)
	}
	return nil
}

// about is the labels that say what an alert is about, without the
// ones every alert has.
func about(l map[string]string) string {
	var parts []string
	for k, v := range l {
		if k == "alertname" || v == "" {
			continue
		}
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func sorted(alerts []alert.Alert) []alert.Alert {
	out := append([]alert.Alert(nil), alerts...)
	sort.SliceStable(out, func(i, j int) bool { return lessAlert(&out[i], &out[j]) })
	return out
}

// AckNote is what an acknowledged alert shows after its summary:
// " [acknowledged by alice (telegram) at 2026-05-01 08:00]", or "".
func AckNote(k *alert.Ack) string {
	if k == nil {
		return ""
	}
	note := " [acknowledged by " + k.By + " (" + k.Source + ") at " + k.At.Local().Format("2006-01-02 15:04")
	if c := strings.Join(strings.Fields(k.Comment), " "); c != "" {
		note += ": " + c
	}
	return note + "]"
}

// SilencedNote is what a silenced alert shows after its summary:
// " [silenced until 2026-05-01 08:00 by alice: waiting for the new disk]",
// or "" for one not silenced.
func SilencedNote(s *alert.Silenced) string {
	if s == nil {
		return ""
	}
	note := " [silenced until " + s.EndsAt.Local().Format("2006-01-02 15:04") + " by " + s.CreatedBy
	if c := strings.Join(strings.Fields(s.Comment), " "); c != "" {
		note += ": " + c
	}
	return note + "]"
}
