package config

import (
	"strings"
	"testing"
	"time"
)

func parseQuiet(quiet string) (*Loaded, error) {
	text := "host: nas1\nnotify:\n  channels:\n    - {name: me, type: pigeon, address: a, quiet: " + quiet + "}\n"
	return Parse(strings.NewReader(text), notifyCatalog)
}

func TestQuietHoursParse(t *testing.T) {
	l, err := parseQuiet(`{from: "22:00", to: "07:30"}`)
	if err != nil {
		t.Fatal(err)
	}
	q := l.Config.Notify.Channels[0].Quiet
	if q == nil || q.From != "22:00" || q.To != "07:30" {
		t.Fatalf("quiet = %+v", q)
	}
	for _, c := range []struct{ quiet, want string }{
		{`{from: "25:00", to: "07:30"}`, `notify.channels[0].quiet.from = "25:00": not a time of day: write HH:MM`},
		{`{from: "22:00", to: "7"}`, `notify.channels[0].quiet.to = "7": not a time of day`},
		{`{from: "22:00", to: "7:3"}`, `quiet.to = "7:3": not a time of day`},
		{`{from: "22:00", to: "22:00"}`, `from and to are the same time`},
		{`{from: "22:00", till: "07:00"}`, `notify.channels[0].quiet.till: unknown key`},
		{`"22:00-07:00"`, `notify.channels[0].quiet`},
	} {
		_, err := parseQuiet(c.quiet)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("quiet: %s\n  got  %v\n  want %q", c.quiet, err, c.want)
		}
	}
}

func TestQuietHoursEnd(t *testing.T) {
	night := &QuietHours{From: "22:00", To: "07:30"}
	day := &QuietHours{From: "13:00", To: "14:00"}
	at := func(d, h, m int) time.Time { return time.Date(2026, 12, d, h, m, 0, 0, time.UTC) }
	for _, c := range []struct {
		q     *QuietHours
		t     time.Time
		quiet bool
		end   time.Time
	}{
		{night, at(7, 21, 59), false, time.Time{}},
		{night, at(7, 22, 0), true, at(8, 7, 30)},
		{night, at(7, 23, 59), true, at(8, 7, 30)},
		{night, at(8, 3, 0), true, at(8, 7, 30)},
		{night, at(8, 7, 29), true, at(8, 7, 30)},
		{night, at(8, 7, 30), false, time.Time{}},
		{day, at(7, 13, 30), true, at(7, 14, 0)},
		{day, at(7, 14, 0), false, time.Time{}},
		{day, at(7, 12, 0), false, time.Time{}},
		{nil, at(7, 23, 0), false, time.Time{}},
	} {
		end, quiet := c.q.End(c.t)
		if quiet != c.quiet || !end.Equal(c.end) {
			t.Errorf("%+v at %s: quiet %v until %s, want %v until %s", c.q, c.t.Format("15:04"), quiet, end, c.quiet, c.end)
		}
	}
	// The end is a time of day in the box's zone, across a change of
	// daylight saving time too (Europe/Berlin, 2026-10-25 03:00 CEST ->
	// 02:00 CET).
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	end, quiet := night.End(time.Date(2026, 10, 24, 23, 0, 0, 0, berlin))
	if want := time.Date(2026, 10, 25, 7, 30, 0, 0, berlin); !quiet || !end.Equal(want) || end.Sub(time.Date(2026, 10, 24, 23, 0, 0, 0, berlin)) != 9*time.Hour+30*time.Minute {
		t.Errorf("Berlin, DST ends in the night: until %s, want %s (9h30 later)", end, want)
	}
}
