package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// QuietHours is a channel's nightly quiet time, in the box's time zone:
// warnings and info wait for its end and go out then, together; criticals
// never wait. From and To are "HH:MM" (24-hour); a time that crosses
// midnight (22:00 to 07:30) is the usual case.
type QuietHours struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
}

// clockMinutes reads "HH:MM" as minutes after midnight.
func clockMinutes(s string) (int, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, fmt.Errorf("not a time of day: write HH:MM on the 24-hour clock, e.g. 22:00 or 07:30")
	}
	return hh*60 + mm, nil
}

// validate reports a time that does not read, or a quiet time of no length.
func (q *QuietHours) validate(p string, errs *Errors) {
	from, err := clockMinutes(q.From)
	if err != nil {
		errs.add(p+".from", q.From, "%v", err)
	}
	to, err2 := clockMinutes(q.To)
	if err2 != nil {
		errs.add(p+".to", q.To, "%v", err2)
	}
	if err == nil && err2 == nil && from == to {
		errs.add(p, q.From+"-"+q.To, "from and to are the same time: the quiet time would have no length (or last all day); leave quiet out to send at once")
	}
}

// End reports whether t falls in the quiet time and, if it does, when that
// quiet time ends: the next To after t, in t's location (the box's zone
// for the daemon). Quiet is from From included to To excluded. A time
// that does not read is never quiet (validate refuses it at load).
func (q *QuietHours) End(t time.Time) (time.Time, bool) {
	if q == nil {
		return time.Time{}, false
	}
	from, err := clockMinutes(q.From)
	to, err2 := clockMinutes(q.To)
	if err != nil || err2 != nil || from == to {
		return time.Time{}, false
	}
	now := t.Hour()*60 + t.Minute()
	var quiet bool
	if from < to {
		quiet = now >= from && now < to
	} else { // across midnight
		quiet = now >= from || now < to
	}
	if !quiet {
		return time.Time{}, false
	}
	y, mo, d := t.Date()
	end := time.Date(y, mo, d, to/60, to%60, 0, 0, t.Location())
	if !end.After(t) {
		end = time.Date(y, mo, d+1, to/60, to%60, 0, 0, t.Location())
	}
	return end, true
}
