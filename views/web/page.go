package web

import (
	"context"
	"embed"
	"fmt"
	"github.com/zwatch/zwatch/fleet"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/tools/replace"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview"
)

//go:embed templates
var templateFiles embed.FS

type pageTemplates struct{ page *template.Template }

func parsePages() (*pageTemplates, error) {
	t, err := template.New("page.html").Funcs(template.FuncMap{
		"iec":       units.IEC,
		"ago":       ago,
		"stamp":     stamp,
		"pct":       func(f float64) string { return fmt.Sprintf("%.0f%%", f) },
		"join":      strings.Join,
		"hasPrefix": strings.HasPrefix,
	}).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("status page templates: %w", err)
	}
	return &pageTemplates{page: t}, nil
}

// pageData is everything page.html shows.
type pageData struct {
	Version   string
	Now       time.Time
	Hosts     []statusview.HostSummary // the picker, when more than one
	Host      statusview.Host
	HasHost   bool
	Summary   string
	Healthy   bool
	Pools     []poolView
	Disks     []diskView
	Incidents []incidentView
	Blind     []string
	HistoryOn bool
	// PlotRange is the span the plots ask the history for (?range=).
	PlotRange  string
	PlotRanges []string
	// Engine is how fleet servers share the rule engine; EngineErr why it
	// could not be read (both empty on one machine).
	Engine    *fleet.EngineStatus
	EngineErr string
}

type poolView struct {
	statusview.Pool
	Source string
}

type diskView struct {
	statusview.Disk
	Source     string
	Attributes []attribute
	// CounterSeries are the SMART counters the disk reports, for one plot.
	CounterSeries string
}

type attribute struct {
	Name  string
	Value uint64
}

type alertView struct {
	alert.Alert
	Steps []replace.Step
}

// plotRanges are the spans the page offers for its plots; the first is the default.
var plotRanges = []string{"30d", "1d", "7d", "400d"}

// pagePlotRange reads ?range= for the plots: one of plotRanges.
func pagePlotRange(r *http.Request) (string, error) {
	v, err := param(r, "range")
	if err != nil || v == "" {
		return plotRanges[0], err
	}
	for _, p := range plotRanges {
		if v == p {
			return v, nil
		}
	}
	return "", badParam("range", "%q: the page plots one of %s", v, strings.Join(plotRanges, ", "))
}

func (s *server) page(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	rng, err := pagePlotRange(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h, hosts, err := s.readHost(ctx, r)
	d := pageData{Version: s.o.Version, Now: time.Now(), HistoryOn: s.o.History != nil, PlotRange: rng, PlotRanges: plotRanges}
	if len(hosts) > 1 {
		d.Hosts = hosts
	}
	if s.o.Engine != nil {
		if st, err := s.o.Engine(ctx); err != nil {
			d.EngineErr = err.Error()
		} else {
			d.Engine = st
		}
	}
	if err != nil {
		var re *requestError
		if !asRequestError(err, &re) || re.code != http.StatusNotFound || len(hosts) > 0 {
			s.fail(w, r, err)
			return
		}
		d.Summary = "No host has reported yet: the first readings arrive within a minute of zwatch starting."
	} else {
		fillPage(&d, h)
		s.answerButtons(&d)
	}
	var b strings.Builder
	if err := s.pages.page.Execute(&b, d); err != nil {
		s.fail(w, r, fmt.Errorf("render the status page: %w", err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(b.String()))
}

func fillPage(d *pageData, h statusview.Host) {
	d.Host, d.HasHost = h, true
	for _, p := range h.Pools {
		d.Pools = append(d.Pools, poolView{Pool: p, Source: history.SourcePool + "/" + p.Name})
	}
	for _, disk := range h.Disks {
		d.Disks = append(d.Disks, newDiskView(disk))
	}
	d.Incidents = incidentViews(h.Alerts)
	d.Blind = blindSpots(h, d.Now)
	d.Summary, d.Healthy = summary(h, d.Now)
}

func newDiskView(disk statusview.Disk) diskView {
	v := diskView{Disk: disk, Source: history.SourceDisk + "/" + disk.Serial}
	var counters []string
	for name, val := range disk.Attributes {
		v.Attributes = append(v.Attributes, attribute{name, val})
		if name != history.SeriesTemperature && name != history.SeriesPowerOnHours {
			counters = append(counters, name)
		}
	}
	sort.Slice(v.Attributes, func(i, j int) bool { return v.Attributes[i].Name < v.Attributes[j].Name })
	sort.Strings(counters)
	v.CounterSeries = strings.Join(counters, ",")
	return v
}

// summary is the line at the top: what is wrong first, or that all is well.
func summary(h statusview.Host, now time.Time) (string, bool) {
	var bad []string
	if h.Silent {
		line := h.Host + " is silent"
		if h.LastHeartbeat != nil {
			line += ": last heard " + ago(*h.LastHeartbeat, now)
		}
		bad = append(bad, line)
	}
	for _, p := range h.Pools {
		if p.State == "ONLINE" && p.DataErrors == 0 {
			continue
		}
		line := p.Name + " " + p.State
		if p.MarginText != "" {
			line += ": "
			if v := leastMarginVdev(p, h.Alerts); v != "" {
				line += v + " "
			}
			line += p.MarginText
		}
		if p.DataErrors > 0 {
			line += fmt.Sprintf(", %d data errors", p.DataErrors)
		}
		bad = append(bad, line)
	}
	for _, d := range h.Disks {
		if d.Health == "failing" {
			bad = append(bad, "disk "+d.Serial+" fails its SMART health check")
		}
	}
	firing, silenced := 0, 0
	for _, a := range h.Alerts {
		if a.State == alert.Firing {
			firing++
			if a.Silenced != nil {
				silenced++
			}
		}
	}
	if len(bad) == 0 && firing > 0 {
		line := fmt.Sprintf("%d alert%s firing", firing, plural(firing))
		if silenced > 0 {
			line += fmt.Sprintf(" (%d silenced)", silenced)
		}
		bad = append(bad, line)
	}
	if len(bad) > 0 {
		return strings.Join(bad, "; "), false
	}
	if len(h.Pools) == 0 {
		return "No pools on " + h.Host, true
	}
	return "All pools healthy", true
}

// redundancyAlert is the rule that names the top-level vdev whose margin
// shrank (rules/names.go).
const redundancyAlert = "RedundancyMargin"

// leastMarginVdev names the vdev the pool's margin is about, when a firing
// margin alert says so; "" when none does.
func leastMarginVdev(p statusview.Pool, alerts []alert.Alert) string {
	if p.Margin == nil {
		return ""
	}
	for _, a := range alerts {
		if a.Name == redundancyAlert && a.State == alert.Firing && a.Labels["pool"] == p.Name &&
			a.Evidence["margin"] == strconv.Itoa(*p.Margin) {
			return a.Labels["vdev"]
		}
	}
	return ""
}

// blindSpots are what zwatch cannot see on the host: collectors that are
// disabled, failing, or have not succeeded for three of their intervals.
func blindSpots(h statusview.Host, now time.Time) []string {
	names := make([]string, 0, len(h.Collectors))
	for name := range h.Collectors {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		c := h.Collectors[name]
		switch {
		case c.Disabled != "":
			out = append(out, name+" is off: "+c.Disabled)
		case c.LastError != "":
			out = append(out, name+" fails: "+c.LastError)
		case c.LastOK == nil:
			out = append(out, name+" has not succeeded yet")
		case c.Interval > 0 && now.Sub(*c.LastOK) > 3*c.Interval:
			out = append(out, name+" last succeeded "+ago(*c.LastOK, now))
		}
	}
	return out
}

func ago(t time.Time, now time.Time) string {
	d := now.Sub(t)
	if d < 0 {
		return "just now"
	}
	return units.Age(d) + " ago"
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
