package zfs

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// reEventHeader matches the line zpool_do_events_short() prints for each
// event: "Nov 30 2026 14:52:28.123456789 ereport.fs.zfs.checksum" (a TAB
// before the class with -H).
var reEventHeader = regexp.MustCompile(`^([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{4})\s+(\d{1,2}:\d{2}:\d{2})(?:\.(\d{1,9}))?\s+(\S+)$`)

// vdevStateNames maps vdev_state_t numbers; events print vdev_state as a
// number, or as `"NAME" (0xN)` since ZoL 0.8.
var vdevStateNames = []string{"UNKNOWN", "CLOSED", "OFFLINE", "REMOVED", "UNAVAIL", "FAULTED", "DEGRADED", "ONLINE"}

// ParseEvents reads `zpool events -v` or `zpool events -f -H -v` from r and
// calls fn for each event as soon as it is complete (at the blank line after
// it or at the next event's header), so it can consume a live `-f` stream.
// Lines it cannot read are skipped. It stops at the first error from fn
// and returns it, or at a read error.
func ParseEvents(r io.Reader, fn func(Event) error) error {
	return parseEventsIn(r, time.Local, fn)
}

func parseEventsIn(r io.Reader, loc *time.Location, fn func(Event) error) error {
	ep := &eventParser{loc: loc}
	lr := newLineReader(r)
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if ev, done := ep.line(line); done {
			if err := fn(ev); err != nil {
				return err
			}
		}
	}
	if ev, done := ep.flush(); done {
		if err := fn(ev); err != nil {
			return err
		}
	}
	if err := lr.readErr(); err != nil {
		return fmt.Errorf("zfs: reading zpool events: %w", err)
	}
	return nil
}

// eventParser accumulates one event at a time.
type eventParser struct {
	loc     *time.Location
	cur     *Event
	baseCol int // indentation of top-level fields, -1 until seen
}

// line consumes one line and returns an event when that line completes one.
func (ep *eventParser) line(l string) (Event, bool) {
	l = strings.TrimRight(l, " \t")
	if l == "" {
		return ep.flush()
	}
	col, idx := expandIndent(l)
	if idx == 0 {
		return ep.header(l)
	}
	if ep.cur == nil {
		return Event{}, false
	}
	if ep.baseCol < 0 {
		ep.baseCol = col
	}
	if col == ep.baseCol {
		ep.field(l[idx:])
	}
	return Event{}, false
}

// header starts a new event, completing the previous one if any.
func (ep *eventParser) header(l string) (Event, bool) {
	if f := strings.Fields(l); len(f) == 2 && f[0] == "TIME" && f[1] == "CLASS" {
		return Event{}, false
	}
	m := reEventHeader.FindStringSubmatch(l)
	var class string
	var t time.Time
	if m != nil {
		class = m[6]
		t = ep.headerTime(m)
	} else if f := strings.Fields(l); len(f) >= 2 && looksLikeClass(f[len(f)-1]) {
		class = f[len(f)-1] // another date format: keep the class
	} else {
		return Event{}, false // not an event header: ignore
	}
	prev, done := ep.flush()
	ep.cur = &Event{Class: class, Time: t, Fields: map[string]string{}}
	ep.baseCol = -1
	return prev, done
}

// headerTime reads the header date, e.g. "Nov 30 2026 14:52:28.123456789".
func (ep *eventParser) headerTime(m []string) time.Time {
	s := m[1] + " " + m[2] + " " + m[3] + " " + m[4]
	t, err := time.ParseInLocation("Jan 2 2006 15:04:05", s, ep.loc)
	if err != nil {
		return time.Time{}
	}
	if m[5] != "" {
		frac := m[5] + strings.Repeat("0", 9-len(m[5]))
		if ns, err := strconv.Atoi(frac); err == nil {
			t = t.Add(time.Duration(ns))
		}
	}
	return t
}

func looksLikeClass(s string) bool {
	for _, p := range []string{"ereport.", "sysevent.", "resource.", "misc."} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// field stores a top-level "name = value" line; nested nvlist contents are
// indented deeper and skipped, "(end name)" lines too.
func (ep *eventParser) field(s string) {
	name, val, ok := strings.Cut(s, " =")
	if !ok || strings.ContainsAny(name, " []()") || name == "" {
		return
	}
	ep.cur.Fields[name] = strings.TrimSpace(val)
}

// flush completes the current event, if any.
func (ep *eventParser) flush() (Event, bool) {
	if ep.cur == nil {
		return Event{}, false
	}
	ev := *ep.cur
	ep.cur = nil
	fillEvent(&ev)
	return ev, true
}

// fillEvent derives the typed fields from Fields.
func fillEvent(ev *Event) {
	f := ev.Fields
	if ev.Class == "" {
		ev.Class = unquote(f["class"])
	}
	ev.Pool = unquote(f["pool"])
	ev.PoolGUID = guidText(f["pool_guid"])
	ev.VdevGUID = guidText(f["vdev_guid"])
	ev.VdevPath = unquote(f["vdev_path"])
	ev.VdevState = eventVdevState(f["vdev_state"])
	if t, ok := eventTime(f["time"]); ok {
		ev.Time = t
	}
}

// unquote strips the double quotes nvlist strings are printed with.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// guidText turns a printed GUID (0x-hex) into decimal, the form zpool
// status uses, so events and pools can be matched.
func guidText(s string) string {
	if s == "" {
		return ""
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		if n, err := strconv.ParseUint(h, 16, 64); err == nil {
			return strconv.FormatUint(n, 10)
		}
	}
	return unquote(s)
}

// eventVdevState reads `"FAULTED" (0x5)` or a bare number.
func eventVdevState(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if strings.HasPrefix(s, `"`) {
		if end := strings.Index(s[1:], `"`); end >= 0 {
			return s[1 : end+1]
		}
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 64)
	if err != nil {
		return s
	}
	if n < uint64(len(vdevStateNames)) {
		return vdevStateNames[n]
	}
	return s
}

// eventTime reads the "time" field: seconds and nanoseconds, printed as
// "0x5cc8a22a 0x9009ee6" (optionally in parentheses).
func eventTime(s string) (time.Time, bool) {
	f := strings.Fields(strings.Trim(s, "()"))
	if len(f) < 1 {
		return time.Time{}, false
	}
	sec, err1 := parseIntAuto(f[0])
	var nsec int64
	if len(f) > 1 {
		n, err := parseIntAuto(f[1])
		if err != nil || n < 0 || n >= 1e9 {
			return time.Time{}, false
		}
		nsec = n
	}
	if err1 != nil || sec <= 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, nsec), true
}

// parseIntAuto reads decimal or 0x-hex.
func parseIntAuto(s string) (int64, error) {
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err := strconv.ParseUint(h, 16, 63)
		return int64(n), err
	}
	return strconv.ParseInt(s, 10, 64)
}
