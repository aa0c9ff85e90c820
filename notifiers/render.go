package notifiers

import (
	"bytes"
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// GuideFunc returns the guided replacement text for an alert, or "" when it
// has none. The daemon injects the replace package's guide; the notifiers do
// not depend on it.
type GuideFunc func(alert.Alert) string

// Message is one notification rendered for people; every channel's sender
// takes it.
type Message = channel.Message

// Render renders a notification without a replacement guide.
func Render(n alert.Notification) Message { return RenderGuided(n, nil) }

// RenderGuided renders a notification; guide (may be nil) adds the guided
// replacement text to alerts that have one.
func RenderGuided(n alert.Notification, guide GuideFunc) Message {
	return RenderAnswerable(n, guide, nil)
}

// AnswerLink is a link that answers a page on the status page: a label
// ("Acknowledge") and its signed URL.
type AnswerLink = channel.Link

// LinkFunc gives the answer links of a page of incident (none for a
// notice that cannot be answered).
type LinkFunc func(n alert.Notification, incident string) []AnswerLink

// RenderAnswerable is RenderGuided with the answer links links (may be nil)
// gives, right under the summary, where a phone shows them without
// scrolling and no length limit cuts them off.
func RenderAnswerable(n alert.Notification, guide GuideFunc, links LinkFunc) Message {
	firing, resolved := split(n.Alerts)
	m := Message{
		ID: n.ID, Host: n.Host, Severity: n.MaxSeverity(), Test: n.Test, Created: n.Created,
		Resolved: len(firing) == 0, Notification: n,
	}
	m.Summary = summaryLine(n, firing, resolved)
	state := strings.ToUpper(string(m.Severity))
	if m.Resolved {
		state = "resolved"
	}
	if state == "" {
		state = "notice"
	}
	m.Title = fmt.Sprintf("zwatch %s: %s", n.Host, state)
	if n.Test {
		m.Title += " (test)"
	}

	v := view{Summary: m.Summary, Host: n.Host, ID: n.ID, Test: n.Test, Created: stamp(n.Created)}
	if n.Escalation > 0 {
		v.Escalated = fmt.Sprintf("Nobody has acknowledged this critical incident, so it comes to you (escalation step %d).", n.Escalation)
	}
	if len(firing) > 0 {
		v.Incident = firing[0].Incident // one group: one incident
		if links != nil && v.Incident != "" {
			v.Links = links(n, v.Incident)
			m.Links = v.Links
		}
	}
	single := len(n.Alerts) == 1
	for _, a := range firing {
		v.Firing = append(v.Firing, alertView(a, single, guide))
	}
	for _, a := range resolved {
		v.Resolved = append(v.Resolved, alertView(a, single, guide))
	}
	m.Text = renderText(v)
	var buf bytes.Buffer
	if err := htmlTmpl.Execute(&buf, v); err != nil {
		// The template is static; fall back to the text rather than send nothing.
		buf.Reset()
		buf.WriteString("<pre>" + template.HTMLEscapeString(m.Text) + "</pre>")
	}
	m.HTML = buf.String()
	return m
}

// split orders alerts most severe first; pending counts as firing.
func split(as []alert.Alert) (firing, resolved []alert.Alert) {
	for _, a := range as {
		if a.State == alert.Resolved {
			resolved = append(resolved, a)
		} else {
			firing = append(firing, a)
		}
	}
	order := func(s []alert.Alert) {
		sort.SliceStable(s, func(i, j int) bool {
			if s[i].Severity.Rank() != s[j].Severity.Rank() {
				return s[i].Severity.Rank() > s[j].Severity.Rank()
			}
			return s[i].StartsAt.Before(s[j].StartsAt)
		})
	}
	order(firing)
	order(resolved)
	return firing, resolved
}

func summaryLine(n alert.Notification, firing, resolved []alert.Alert) string {
	var b strings.Builder
	if n.Test {
		b.WriteString("[TEST] ")
	}
	if n.Escalation > 0 {
		b.WriteString("[ESCALATED] ")
	}
	switch {
	case len(firing) > 0:
		fmt.Fprintf(&b, "[%s] %s", strings.ToUpper(string(firing[0].Severity)), alertSummary(firing[0]))
		if more := countedBeside(firing); more > 0 {
			fmt.Fprintf(&b, " (+%d more)", more)
		}
	case len(resolved) > 0:
		fmt.Fprintf(&b, "[RESOLVED] %s", alertSummary(resolved[0]))
		if more := countedBeside(resolved); more > 0 {
			fmt.Fprintf(&b, " (+%d more)", more)
		}
	default:
		fmt.Fprintf(&b, "[NOTICE] zwatch on %s: empty notification", n.Host)
	}
	return oneLine(b.String())
}

// countedBeside is the "+N more" of a summary headed by as[0] (the most
// severe): the other alerts, leaving out info ones beside a warning or a
// critical. An info alert that joins an incident later (a resilver's
// progress) is told on its own, so counting it in the resolved notice
// made "+2 more" end as "+3 more"; the body still lists it.
func countedBeside(as []alert.Alert) int {
	if as[0].Severity == alert.Info {
		return len(as) - 1
	}
	n := 0
	for _, a := range as[1:] {
		if a.Severity != alert.Info {
			n++
		}
	}
	return n
}

func alertSummary(a alert.Alert) string {
	if s := strings.TrimSpace(a.Summary); s != "" {
		return oneLine(s)
	}
	s := a.Name
	for _, k := range []string{"pool", "vdev", "serial", "device"} {
		if v := a.Labels[k]; v != "" {
			s += " " + k + "=" + v
		}
	}
	return s
}

func oneLine(s string) string { return channel.OneLine(s) }

type alertItem struct {
	Severity, Summary, Description, Since, Ended, Guide, Acked string
	Evidence                                                   [][2]string
	ShowSummary                                                bool
}

type view struct {
	Summary, Host, ID, Created, Incident, Escalated string
	Test                                            bool
	Firing, Resolved                                []alertItem
	Links                                           []AnswerLink
}

func alertView(a alert.Alert, single bool, guide GuideFunc) alertItem {
	it := alertItem{
		Severity: strings.ToUpper(string(a.Severity)), Summary: alertSummary(a),
		Description: strings.TrimSpace(a.Description), Since: stamp(a.StartsAt),
		ShowSummary: !single,
	}
	if a.EndsAt != nil {
		it.Ended = stamp(*a.EndsAt)
		if !a.StartsAt.IsZero() && a.EndsAt.After(a.StartsAt) {
			it.Ended += " (lasted " + a.EndsAt.Sub(a.StartsAt).Round(time.Second).String() + ")"
		}
	}
	keys := make([]string, 0, len(a.Evidence))
	for k := range a.Evidence {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		it.Evidence = append(it.Evidence, [2]string{k, a.Evidence[k]})
	}
	if k := a.Ack; k != nil && a.State != alert.Resolved {
		it.Acked = "Acknowledged by " + k.By + " (" + k.Source + ") at " + stamp(k.At)
		if k.Comment != "" {
			it.Acked += ": " + oneLine(k.Comment)
		}
	}
	if guide != nil && a.State != alert.Resolved {
		it.Guide = strings.TrimSpace(safeGuide(guide, a))
	}
	return it
}

// safeGuide keeps a faulty guide from taking the notifier down with it: the
// alert still goes out, only without the guide.
func safeGuide(g GuideFunc, a alert.Alert) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = ""
		}
	}()
	return g(a)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func renderText(v view) string {
	var b strings.Builder
	b.WriteString(v.Summary)
	b.WriteString("\n")
	if v.Escalated != "" {
		b.WriteString("\n" + v.Escalated + "\n")
	}
	if len(v.Links) > 0 {
		b.WriteString("\nAnswer on the status page (log in, confirm; each link works once, for 72 h):\n")
		for _, l := range v.Links {
			fmt.Fprintf(&b, "  %s: %s\n", l.Label, l.URL)
		}
	}
	item := func(it alertItem, resolved bool) {
		b.WriteString("\n")
		if it.ShowSummary {
			mark := "● " + it.Severity
			if resolved {
				mark = "✓ RESOLVED"
			}
			fmt.Fprintf(&b, "%s  %s\n", mark, it.Summary)
		}
		if it.Description != "" {
			b.WriteString(it.Description + "\n")
		}
		if len(it.Evidence) > 0 {
			b.WriteString("Evidence:\n")
			for _, e := range it.Evidence {
				fmt.Fprintf(&b, "  %s: %s\n", e[0], e[1])
			}
		}
		if it.Since != "" {
			fmt.Fprintf(&b, "Since: %s\n", it.Since)
		}
		if resolved && it.Ended != "" {
			fmt.Fprintf(&b, "Resolved: %s\n", it.Ended)
		}
		if it.Acked != "" {
			b.WriteString(it.Acked + "\n")
		}
		if it.Guide != "" {
			b.WriteString("\nReplacement guide:\n" + it.Guide + "\n")
		}
	}
	for _, it := range v.Firing {
		item(it, false)
	}
	if len(v.Resolved) > 0 && len(v.Firing) > 0 {
		b.WriteString("\nResolved:\n")
	}
	for _, it := range v.Resolved {
		item(it, true)
	}
	if v.Incident != "" {
		fmt.Fprintf(&b, "\nIncident %s: `zwatch ack %s` stops the repeats; `zwatch snooze %s 24h` silences it for a day.\n", v.Incident, v.Incident, v.Incident)
	}
	fmt.Fprintf(&b, "\n— zwatch on %s", v.Host)
	if v.Created != "" {
		fmt.Fprintf(&b, ", %s", v.Created)
	}
	if v.ID != "" {
		fmt.Fprintf(&b, ", notification %s", v.ID)
	}
	if v.Test {
		b.WriteString("\nThis is a test: nothing is wrong.")
	}
	return b.String()
}

var htmlTmpl = template.Must(template.New("mail").Parse(`<!DOCTYPE html>
<html><body style="font-family:sans-serif;font-size:14px;line-height:1.4">
<p style="font-size:16px"><strong>{{.Summary}}</strong></p>
{{with .Escalated}}<p><strong>{{.}}</strong></p>{{end}}
{{with .Links}}<p>{{range $i, $l := .}}{{if $i}} · {{end}}<a href="{{$l.URL}}">{{$l.Label}}</a>{{end}} <span style="color:#666;font-size:12px">(on the status page: log in, confirm; each link works once, for 72 h)</span></p>{{end}}
{{range .Firing}}{{template "item" .}}{{end}}
{{if .Resolved}}{{if .Firing}}<h3>Resolved</h3>{{end}}{{range .Resolved}}{{template "item" .}}{{end}}{{end}}
{{if .Incident}}<p>Incident {{.Incident}}: <code>zwatch ack {{.Incident}}</code> stops the repeats; <code>zwatch snooze {{.Incident}} 24h</code> silences it for a day.</p>{{end}}
<p style="color:#666;font-size:12px">zwatch on {{.Host}}{{if .Created}}, {{.Created}}{{end}}{{if .ID}}, notification {{.ID}}{{end}}</p>
{{if .Test}}<p><em>This is a test: nothing is wrong.</em></p>{{end}}
</body></html>
{{define "item"}}<div style="margin:12px 0">
{{if .ShowSummary}}<p><strong>{{.Severity}}</strong> {{.Summary}}</p>{{end}}
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .Evidence}}<table style="border-collapse:collapse">{{range .Evidence}}<tr><td style="padding:2px 8px 2px 0;color:#555">{{index . 0}}</td><td style="font-family:monospace">{{index . 1}}</td></tr>{{end}}</table>{{end}}
{{if .Since}}<p>Since: {{.Since}}</p>{{end}}{{if .Ended}}<p>Resolved: {{.Ended}}</p>{{end}}{{if .Acked}}<p>{{.Acked}}</p>{{end}}
{{if .Guide}}<h3>Replacement guide</h3><pre style="font-family:monospace;white-space:pre-wrap">{{.Guide}}</pre>{{end}}
</div>{{end}}`))
