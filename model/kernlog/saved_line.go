package kernlog

import (
	"strconv"
	"strings"
	"time"
)

// parseSavedLine recognises one line of a saved log; ok false for a line
// that is not a kernel log line.
func parseSavedLine(line string) (Record, Format, bool) {
	line = trimPasted(line)
	if line == "" {
		return Record{}, "", false
	}
	switch {
	case line[0] == '{':
		return parseJournalJSON(line)
	case isKmsgLine(line):
		rec, err := ParseKmsg([]byte(line))
		return rec, FormatKmsg, err == nil
	}
	rec := unknownRecord()
	// dmesg -r and kern.log by some daemons keep the "<3>" priority.
	if pri, rest, ok := cutPriority(line); ok {
		rec.Priority, rec.Facility = pri&7, pri>>3
		line = rest
	}
	// dmesg -x: "kern  :err   : [...] text".
	if fac, lvl, rest, ok := cutDecoded(line); ok {
		rec.Facility, rec.Priority = fac, lvl
		line = rest
	}
	if line != "" && line[0] == '[' {
		if r, format, ok := parseBracketed(rec, line); ok {
			return r, format, true
		}
	}
	if r, format, ok := parseSyslogLike(rec, line); ok {
		return r, format, true
	}
	// A line with a "<N>" priority is the kernel's even without a stamp; a
	// bare line only when it is about a disk.
	if _, ok := Classify(line); ok || rec.Priority >= 0 {
		rec.Message = line
		return rec, FormatPlain, true
	}
	return embeddedRecord(rec, line)
}

// embeddedRecord finds a dmesg line printed after other output on the same
// line (a terminal where another program wrote at the same time: "0000
// 00000000 00[  +0.000161] nvme0n1: …"). Only a message about a disk is
// taken from such a line.
func embeddedRecord(rec Record, line string) (Record, Format, bool) {
	// Such a prefix is short; looking further would make a line of many
	// '[' cost its length squared.
	const maxPrefix, maxTries = 128, 4
	for from, tries := 1, 0; from < len(line) && from < maxPrefix && tries < maxTries; tries++ {
		i := strings.IndexByte(line[from:], '[')
		if i < 0 {
			break
		}
		r, format, ok := parseBracketed(rec, line[from+i:])
		if ok {
			if _, found := Classify(r.Message); found {
				return r, format, true
			}
		}
		from += i + 1
	}
	return Record{}, "", false
}

func unknownRecord() Record { return Record{Priority: -1, Facility: -1, Mono: -1} }

// trimPasted drops what pasting into a bug report or a mail adds in front:
// indentation, "> " quote marks and a Markdown code mark.
func trimPasted(line string) string {
	for {
		// \x1e starts each record of journalctl -o json-seq.
		t := strings.TrimLeft(line, " \t`\x1e")
		t = strings.TrimPrefix(t, ">")
		if t == line {
			return line
		}
		line = t
	}
}

// isKmsgLine: "PRI,SEQ,USEC,FLAGS...;" with three numbers.
func isKmsgLine(line string) bool {
	semi := strings.IndexByte(line, ';')
	if semi < 0 {
		return false
	}
	fields := strings.SplitN(line[:semi], ",", 4)
	if len(fields) < 4 {
		return false
	}
	for _, f := range fields[:3] {
		if !allDigits(f) {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// cutPriority reads a leading "<N>".
func cutPriority(line string) (int, string, bool) {
	if len(line) < 3 || line[0] != '<' {
		return 0, line, false
	}
	end := strings.IndexByte(line, '>')
	if end < 2 || end > 5 || !allDigits(line[1:end]) {
		return 0, line, false
	}
	n, _ := strconv.Atoi(line[1:end])
	return n, line[end+1:], true
}

var (
	facilityNames = []string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp"}
	levelNames    = []string{"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"}
)

// cutDecoded reads dmesg -x's "kern  :err   : " prefix.
func cutDecoded(line string) (int, int, string, bool) {
	fac, rest, ok := strings.Cut(line, ":")
	if !ok {
		return 0, 0, line, false
	}
	lvl, rest, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, 0, line, false
	}
	f := indexOf(facilityNames, strings.TrimRight(fac, " "))
	l := indexOf(levelNames, strings.TrimRight(lvl, " "))
	if f < 0 || l < 0 {
		return 0, 0, line, false
	}
	return f, l, strings.TrimPrefix(rest, " "), true
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// parseBracketed reads "[   5.140900] text" (dmesg), "[Tue Dec  1
// 18:17:37 2026] text" (dmesg -T) and "[   5.140900] host kernel: text"
// (journalctl -o short-monotonic).
func parseBracketed(rec Record, line string) (Record, Format, bool) {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return Record{}, "", false
	}
	stamp, text := strings.TrimSpace(line[1:end]), line[end+1:]
	text = strings.TrimPrefix(text, " ")
	// dmesg -d and -e print the delta to the previous line ("+0.000001")
	// or a coarse "Jan13 04:31" first; with -T the full stamp follows (one
	// stamp only: a line of many deltas is not a log line).
	if isDeltaStamp(stamp) || isReltimeStamp(stamp) {
		if strings.HasPrefix(text, "[") {
			if r, ok := parseCtimeBracket(rec, text); ok {
				return r, FormatDmesgTime, true
			}
		}
		rec.Message = trimCallerID(text)
		return rec, FormatDmesg, true
	}
	// dmesg -d: "[    5.140900 <    0.000012>] text".
	if before, _, ok := strings.Cut(stamp, " <"); ok && strings.HasSuffix(stamp, ">") {
		stamp = before
	}
	if mono, ok := parseMono(stamp); ok {
		rec.Mono = mono
		text = trimCallerID(text)
		if msg, ok := afterKernelTag(text); ok {
			rec.Message = msg
			return rec, FormatJournal, true
		}
		rec.Message = text
		return rec, FormatDmesg, true
	}
	if t, ok := parseCtime(stamp); ok {
		rec.Time = t
		rec.Message = trimCallerID(text)
		return rec, FormatDmesgTime, true
	}
	return Record{}, "", false
}

// parseCtimeBracket reads "[Tue Jan 13 04:33:10 2026] text" after dmesg
// -d's or -e's first stamp.
func parseCtimeBracket(rec Record, line string) (Record, bool) {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return Record{}, false
	}
	t, ok := parseCtime(strings.TrimSpace(line[1:end]))
	if !ok {
		return Record{}, false
	}
	rec.Time = t
	rec.Message = trimCallerID(strings.TrimPrefix(line[end+1:], " "))
	return rec, true
}

// parseCtime reads dmesg -T's "Tue Dec  1 18:17:37 2026". Under another
// locale the day and month are not English ("Fr Aug 26 22:01:01 2022",
// "Di Okt  1 …"): such a stamp is still recognised, with the time left
// zero when the month cannot be read.
func parseCtime(stamp string) (time.Time, bool) {
	if t, err := time.Parse("Mon Jan _2 15:04:05 2006", stamp); err == nil {
		return t, true
	}
	fields := strings.Fields(stamp)
	if len(fields) != 5 || !allDigits(fields[2]) || len(fields[4]) != 4 || !allDigits(fields[4]) {
		return time.Time{}, false
	}
	clock := strings.Split(fields[3], ":")
	if len(clock) != 3 || !allDigits(clock[0]) || !allDigits(clock[1]) || !allDigits(clock[2]) {
		return time.Time{}, false
	}
	if t, err := time.Parse("Jan 2 15:04:05 2006", strings.Join(fields[1:], " ")); err == nil {
		return t, true
	}
	return time.Time{}, true
}

func isDeltaStamp(s string) bool {
	d, ok := strings.CutPrefix(s, "+")
	if !ok {
		return false
	}
	_, ok = parseMono(d)
	return ok
}

// isReltimeStamp: dmesg -e's "Jan13 04:31".
func isReltimeStamp(s string) bool {
	day, clock, ok := strings.Cut(s, " ")
	if !ok || len(day) < 4 || !isMonthAbbrev(day[:3]) || !allDigits(day[3:]) {
		return false
	}
	hh, mm, ok := strings.Cut(clock, ":")
	return ok && len(hh) == 2 && len(mm) == 2 && allDigits(hh) && allDigits(mm)
}

// parseMono reads "5.140900" (seconds since boot).
func parseMono(s string) (time.Duration, bool) {
	secs, frac, ok := strings.Cut(s, ".")
	if !ok || !allDigits(secs) || !allDigits(frac) || len(secs) > 10 || len(frac) > 9 {
		return 0, false
	}
	whole, _ := strconv.ParseInt(secs, 10, 64)
	part, _ := strconv.ParseInt(frac, 10, 64)
	for i := len(frac); i < 9; i++ {
		part *= 10
	}
	return time.Duration(whole)*time.Second + time.Duration(part), true
}

// trimCallerID drops CONFIG_PRINTK_CALLER's "[    T123] " after the stamp.
func trimCallerID(text string) string {
	if len(text) < 4 || text[0] != '[' {
		return text
	}
	end := strings.IndexByte(text, ']')
	if end < 0 {
		return text
	}
	id := strings.TrimSpace(text[1:end])
	if len(id) < 2 || (id[0] != 'T' && id[0] != 'C') || !allDigits(id[1:]) {
		return text
	}
	return strings.TrimPrefix(text[end+1:], " ")
}

// afterKernelTag reads "host kernel: text" and returns text; ok false when
// the line is from another program.
func afterKernelTag(s string) (string, bool) {
	// Some syslog daemons (routers, busybox) write no host name.
	if msg, ok := strings.CutPrefix(s, "kernel: "); ok {
		return msg, true
	}
	host, rest, ok := strings.Cut(s, " ")
	if !ok || host == "" || strings.HasSuffix(host, ":") {
		return "", false
	}
	msg, ok := strings.CutPrefix(rest, "kernel: ")
	if !ok {
		if rest == "kernel:" {
			return "", true
		}
		return "", false
	}
	return msg, true
}
