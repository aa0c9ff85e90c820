package zfs

import (
	"strings"
	"time"
)

// Snapshot tools RecognizeSnapshot tells apart (SnapshotScheme.Tool).
const (
	ToolSanoid          = "sanoid"
	ToolSyncoid         = "syncoid"
	ToolZfsAutoSnapshot = "zfs-auto-snapshot"
	ToolTrueNAS         = "truenas"
	ToolZrepl           = "zrepl"
	ToolPyznap          = "pyznap"
)

// Periods of the labelled schedules, rounded UP (a month is 31 days, a
// year 366) so that a dataset is never called stale early. "frequent" is
// 15 minutes in all three tools: sanoid's frequent_period default,
// zfs-auto-snapshot's */15 cron line and pyznap's documented cron job.
const (
	periodFrequent = 15 * time.Minute
	periodHourly   = time.Hour
	periodDaily    = 24 * time.Hour
	periodWeekly   = 7 * periodDaily
	periodMonthly  = 31 * periodDaily
	periodYearly   = 366 * periodDaily
)

var labelPeriods = map[string]time.Duration{
	"frequently": periodFrequent, // sanoid
	"frequent":   periodFrequent, // zfs-auto-snapshot, pyznap
	"hourly":     periodHourly,
	"daily":      periodDaily,
	"weekly":     periodWeekly,
	"monthly":    periodMonthly,
	"yearly":     periodYearly,
}

// The names as each tool writes them (docs/snapshot-names.md cites the
// sources and real examples; zfs/snapnames_test.go holds the same forms
// as regular expressions and checks that the two agree). They are matched
// by hand, digit by digit: the summary reads every snapshot of the host,
// and a regular expression per name was most of its cost. The timestamps
// in the names are not read: the snapshot's creation property is the
// truth, and the names' time zones differ from tool to tool.
//
//	sanoid             autosnap_%Y-%m-%d_%H:%M:%S_LABEL
//	syncoid            syncoid_[ID]HOST_%Y-%m-%d:%H:%M:%S (before 2020),
//	                   …:%S-GMT[-]hh:mm (2020), …_%H:%M:%S-GMT[-]hh:mm (2025)
//	zfs-auto-snapshot  zfs-auto-snap_LABEL-%Y-%m-%d-%H%M (UTC); without a
//	                   label zfs-auto-snap-DATE (old) or zfs-auto-snap_-DATE
//	pyznap             pyznap_%Y-%m-%d_%H:%M:%S_LABEL
//	TrueNAS            auto-%Y-%m-%d_%H-%M (the default naming schema);
//	                   FreeNAS before 11.3 auto-%Y%m%d.%H%M[%S]-LIFETIME
//	zrepl              zrepl_[…_]TIMESTAMP: dense 20060102_150405_000 (the
//	                   default), human 2006-01-02_15:04[:05], iso-8601 with
//	                   the zone's "+" written "_", or unix seconds
const (
	shapeSortable   = "DDDD-DD-DD_DD:DD:DD" // sanoid, pyznap, zrepl human
	shapeAutoSnap   = "-DDDD-DD-DD-DDDD"
	shapeTrueNAS    = "auto-DDDD-DD-DD_DD-DD"
	shapeZreplDense = "DDDDDDDD_DDDDDD_DDD"
)

// shape reports whether s has the form of pattern, where D stands for an
// ASCII digit and any other byte for itself.
func shape(s, pattern string) bool {
	if len(s) != len(pattern) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if pattern[i] == 'D' {
			if !isDigit(s[i]) {
				return false
			}
		} else if s[i] != pattern[i] {
			return false
		}
	}
	return true
}

// shapeSuffix reports whether s ends in the form of pattern, and returns
// what comes before.
func shapeSuffix(s, pattern string) (rest string, ok bool) {
	if len(s) < len(pattern) || !shape(s[len(s)-len(pattern):], pattern) {
		return "", false
	}
	return s[:len(s)-len(pattern)], true
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// isAutoSnapLabel is a byte of a zfs-auto-snapshot label as zwatch
// accepts it: letters, digits, "." and ":".
func isAutoSnapLabel(c byte) bool {
	return isLower(c) || c >= 'A' && c <= 'Z' || isDigit(c) || c == '.' || c == ':'
}

// noNewline is any byte but a newline: what a host or prefix may hold.
func noNewline(c byte) bool { return c != '\n' }

// sortableLabel reads PREFIX%Y-%m-%d_%H:%M:%S_LABEL (sanoid, pyznap).
func sortableLabel(name, prefix string) (label string, ok bool) {
	rest, found := strings.CutPrefix(name, prefix)
	n := len(shapeSortable)
	if !found || len(rest) < n+2 || !shape(rest[:n], shapeSortable) || rest[n] != '_' {
		return "", false
	}
	label = rest[n+1:]
	return label, allBytes(label, isLower)
}

func matchSyncoid(name string) bool {
	rest, found := strings.CutPrefix(name, "syncoid_")
	if !found {
		return false
	}
	if r, ok := shapeSuffix(rest, "-GMTDD:DD"); ok {
		rest = r
	} else if r, ok := shapeSuffix(rest, "-GMT-DD:DD"); ok {
		rest = r
	}
	host, ok := shapeSuffix(rest, "_DDDD-DD-DD_DD:DD:DD")
	if !ok {
		host, ok = shapeSuffix(rest, "_DDDD-DD-DD:DD:DD:DD")
	}
	return ok && host != "" && allBytes(host, noNewline)
}

func matchZfsAutoSnap(name string) (label string, ok bool) {
	head, ok := shapeSuffix(name, shapeAutoSnap)
	if !ok {
		return "", false
	}
	if head == "zfs-auto-snap" {
		return "", true
	}
	label, found := strings.CutPrefix(head, "zfs-auto-snap_")
	return label, found && allBytes(label, isAutoSnapLabel)
}

// matchFreeNASLegacy: auto-%Y%m%d.%H%M[%S]-N(h|d|w|m|y).
func matchFreeNASLegacy(name string) bool {
	rest, found := strings.CutPrefix(name, "auto-")
	if !found || len(rest) < 16 || !shape(rest[:13], "DDDDDDDD.DDDD") {
		return false
	}
	rest = rest[13:]
	if len(rest) > 2 && isDigit(rest[0]) && isDigit(rest[1]) && rest[2] == '-' {
		rest = rest[2:] // the seconds of 11.3's legacy schema
	}
	n := len(rest)
	if n < 3 || rest[0] != '-' || !strings.ContainsRune("hdwmy", rune(rest[n-1])) {
		return false
	}
	return allBytes(rest[1:n-1], isDigit)
}

// zreplStamp reports whether s is one of zrepl's timestamp formats.
func zreplStamp(s string) bool {
	for _, p := range []string{shapeZreplDense, shapeSortable, "DDDD-DD-DD_DD:DD", "DDDDDDDDDD"} {
		if shape(s, p) {
			return true
		}
	}
	return zreplISO(s)
}

// zreplISO matches DDDD-DD-DDTDD:DD:DD[.D+](Z|[-_]DD[:]DD).
func zreplISO(s string) bool {
	n := len(s)
	switch {
	case n > 0 && s[n-1] == 'Z':
		s = s[:n-1]
	case n >= 6 && (s[n-6] == '-' || s[n-6] == '_') && shape(s[n-5:], "DD:DD"):
		s = s[:n-6]
	case n >= 5 && (s[n-5] == '-' || s[n-5] == '_') && shape(s[n-4:], "DDDD"):
		s = s[:n-5]
	default:
		return false
	}
	const date = "DDDD-DD-DDTDD:DD:DD"
	if len(s) > len(date) && s[len(date)] == '.' {
		frac := s[len(date)+1:]
		if frac == "" || !allBytes(frac, isDigit) {
			return false
		}
		s = s[:len(date)]
	}
	return shape(s, date)
}

// matchZrepl: zrepl_, an optional rest of the prefix ending in "_", then
// the timestamp.
func matchZrepl(name string) bool {
	if !strings.HasPrefix(name, "zrepl_") {
		return false
	}
	for i := len("zrepl_"); i < len(name); i++ {
		if name[i-1] == '_' && zreplStamp(name[i:]) {
			return allBytes(name[:i], noNewline)
		}
	}
	return false
}

// RecognizeSnapshot reads a snapshot name (the part after @) as a snapshot
// tool names it. label is the schedule the name carries (hourly, daily,
// frequent…) and period its interval; period is 0 when the name carries
// none (TrueNAS, zrepl, a label the tool's user made up): the summary then
// reads it from the gaps between that tool's snapshots. syncoid's own sync
// snapshots are replication markers: tool syncoid, no label, no period,
// and never a schedule to judge. ok is false for any other name.
func RecognizeSnapshot(name string) (tool, label string, period time.Duration, ok bool) {
	if len(name) > 255 || len(name) < 5 {
		return "", "", 0, false // ZFS names are at most 255 bytes
	}
	switch name[:4] {
	case "auto":
		if label, ok := sortableLabel(name, "autosnap_"); ok {
			return ToolSanoid, label, labelPeriods[label], true
		}
		if shape(name, shapeTrueNAS) || matchFreeNASLegacy(name) {
			return ToolTrueNAS, "", 0, true
		}
	case "sync":
		if matchSyncoid(name) {
			return ToolSyncoid, "", 0, true
		}
	case "zfs-":
		if label, ok := matchZfsAutoSnap(name); ok {
			return ToolZfsAutoSnapshot, label, labelPeriods[label], true
		}
	case "pyzn":
		if label, ok := sortableLabel(name, "pyznap_"); ok {
			return ToolPyznap, label, labelPeriods[label], true
		}
	case "zrep":
		if matchZrepl(name) {
			return ToolZrepl, "", 0, true
		}
	}
	return "", "", 0, false
}

// frequentLabel reports whether label is the tools' "frequent" schedule,
// whose interval is a setting (sanoid's frequent_period, the cron line of
// zfs-auto-snapshot and pyznap): its 15 minutes are a floor, and the gaps
// between the snapshots tell when it runs less often.
func frequentLabel(label string) bool {
	return label == "frequent" || label == "frequently"
}

// scheduled reports whether snapshots of tool and label follow a schedule
// whose period can be judged: not syncoid's markers, and not a
// zfs-auto-snapshot run by hand without --label.
func scheduled(tool, label string) bool {
	switch tool {
	case ToolSyncoid:
		return false
	case ToolZfsAutoSnapshot:
		return label != ""
	}
	return true
}
