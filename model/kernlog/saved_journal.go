package kernlog

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// parseSyslogLike reads "Dec 01 18:17:37 host kernel: text" (journalctl -k,
// short and short-precise), "2026-12-01T18:17:37+0000 host kernel: text"
// (short-iso), "Tue 2026-12-01 18:17:37 UTC host kernel: text" (short-full)
// and /var/log/kern.log lines, which keep the kernel's "[   5.1]" stamp.
func parseSyslogLike(rec Record, line string) (Record, Format, bool) {
	t, rest, ok := cutWallStamp(line)
	if !ok {
		// "kernel: text": a journal line whose stamp and host were cut off.
		if msg, found := strings.CutPrefix(line, "kernel: "); found {
			rec.Message = msg
			return rec, FormatJournal, true
		}
		return Record{}, "", false
	}
	msg, ok := afterKernelTag(rest)
	if !ok {
		return Record{}, "", false
	}
	rec.Time = t
	format := FormatJournal
	if strings.HasPrefix(msg, "[") {
		if end := strings.IndexByte(msg, ']'); end > 0 {
			if mono, ok := parseMono(strings.TrimSpace(msg[1:end])); ok {
				rec.Mono = mono
				msg = trimCallerID(strings.TrimPrefix(msg[end+1:], " "))
				format = FormatSyslog
			}
		}
	}
	rec.Message = msg
	return rec, format, true
}

// cutWallStamp reads the wall-clock stamp at the start of a journal or
// syslog line. A stamp without a year ("Dec 01 18:17:37") has year 0: the
// line does not say it, and guessing would misplace an old log.
func cutWallStamp(line string) (time.Time, string, bool) {
	if len(line) >= 15 && isMonthAbbrev(line[:3]) && line[3] == ' ' {
		end := 15
		for end < len(line) && (line[end] == '.' || (line[end] >= '0' && line[end] <= '9')) {
			end++
		}
		t, err := time.Parse("Jan _2 15:04:05.999999999", line[:end])
		if err != nil || end >= len(line) || line[end] != ' ' {
			return time.Time{}, "", false
		}
		return t, line[end+1:], true
	}
	first, rest, ok := strings.Cut(line, " ")
	if !ok {
		return time.Time{}, "", false
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, first); err == nil {
			return t, rest, true
		}
	}
	// rsyslog's "2024-10-31 13:36:11" (no zone, read as UTC).
	if date, rest, ok := strings.Cut(rest, " "); ok {
		if t, err := time.Parse("2006-01-02 15:04:05.999999999", first+" "+date); err == nil {
			return t, rest, true
		}
	}
	// short-full: "Tue 2026-12-01 18:17:37 UTC".
	fields := strings.SplitN(line, " ", 5)
	if len(fields) == 5 {
		stamp := strings.Join(fields[:4], " ")
		if t, err := time.Parse("Mon 2006-01-02 15:04:05 MST", stamp); err == nil {
			return t, fields[4], true
		}
	}
	return time.Time{}, "", false
}

func isMonthAbbrev(s string) bool {
	switch s {
	case "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec":
		return true
	}
	return false
}

// journalEntry holds the fields of journalctl -o json that a kernel record
// needs; journald writes every value as a string (or, for a MESSAGE that is
// not UTF-8, an array of bytes).
type journalEntry struct {
	Message    json.RawMessage `json:"MESSAGE"`
	Priority   string          `json:"PRIORITY"`
	Facility   string          `json:"SYSLOG_FACILITY"`
	SourceMono string          `json:"_SOURCE_MONOTONIC_TIMESTAMP"`
	Realtime   string          `json:"__REALTIME_TIMESTAMP"`
	Device     string          `json:"_KERNEL_DEVICE"`
	Transport  string          `json:"_TRANSPORT"`
}

// parseJournalJSON reads one line of journalctl -o json; entries from user
// space (another _TRANSPORT) are not kernel records.
func parseJournalJSON(line string) (Record, Format, bool) {
	var e journalEntry
	if err := json.Unmarshal([]byte(line), &e); err != nil || e.Message == nil {
		return Record{}, "", false
	}
	if e.Transport != "" && e.Transport != "kernel" {
		return Record{}, "", false
	}
	msg, ok := journalMessage(e.Message)
	if !ok {
		return Record{}, "", false
	}
	rec := unknownRecord()
	rec.Message = msg
	rec.Device = e.Device
	if n, err := strconv.Atoi(e.Priority); err == nil && n >= 0 && n <= 7 {
		rec.Priority = n
	}
	if n, err := strconv.Atoi(e.Facility); err == nil && n >= 0 {
		rec.Facility = n
	}
	if n, err := strconv.ParseInt(e.SourceMono, 10, 64); err == nil && n >= 0 && n <= maxMonoMicros {
		rec.Mono = time.Duration(n) * time.Microsecond
	}
	if n, err := strconv.ParseInt(e.Realtime, 10, 64); err == nil && n > 0 {
		rec.Time = time.UnixMicro(n).UTC()
	}
	return rec, FormatJournalJSON, true
}

// journalMessage decodes MESSAGE: a string, or an array of byte values.
func journalMessage(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var bs []byte
	var nums []int
	if err := json.Unmarshal(raw, &nums); err != nil {
		return "", false
	}
	for _, n := range nums {
		if n < 0 || n > 255 {
			return "", false
		}
		bs = append(bs, byte(n))
	}
	return string(bs), true
}
