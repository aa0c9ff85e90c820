package zfs

import (
	"regexp"
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

// The names as each tool writes them; docs/snapshot-names.md cites real
// examples of each. The timestamps in the names are not read: the
// snapshot's creation property is the truth, and the names' time zones
// differ from tool to tool.
var (
	// sanoid: autosnap_%Y-%m-%d_%H:%M:%S_LABEL
	reSanoid = regexp.MustCompile(`^autosnap_\d{4}-\d{2}-\d{2}_\d{2}:\d{2}:\d{2}_([a-z]+)$`)
	// syncoid: syncoid_[IDENTIFIER]HOST_%Y-%m-%d:%H:%M:%S before 2020;
	// since, syncoid_[IDENTIFIER]HOST_%Y-%m-%d_%H:%M:%S-GMT[-]hh:mm (no
	// "+": it is not allowed in a snapshot name).
	reSyncoid = regexp.MustCompile(`^syncoid_.+_\d{4}-\d{2}-\d{2}[_:]\d{2}:\d{2}:\d{2}(?:-GMT-?\d{2}:\d{2})?$`)
	// zfs-auto-snapshot: zfs-auto-snap_LABEL-%Y-%m-%d-%H%M, or without
	// _LABEL when run by hand without --label.
	// The date is UTC (date -u +%F-%H%M); older releases wrote no "_"
	// when there was no label, newer ones write "zfs-auto-snap_-DATE".
	reZfsAutoSnap = regexp.MustCompile(`^zfs-auto-snap(?:_([A-Za-z0-9.:]*))?-\d{4}-\d{2}-\d{2}-\d{4}$`)
	// pyznap: pyznap_%Y-%m-%d_%H:%M:%S_LABEL
	rePyznap = regexp.MustCompile(`^pyznap_\d{4}-\d{2}-\d{2}_\d{2}:\d{2}:\d{2}_([a-z]+)$`)
	// TrueNAS periodic snapshot task, default naming schema
	// auto-%Y-%m-%d_%H-%M; FreeNAS before 11.3 named them
	// auto-%Y%m%d.%H%M-LIFETIME (11.3 kept it for legacy tasks with %S).
	reTrueNAS       = regexp.MustCompile(`^auto-\d{4}-\d{2}-\d{2}_\d{2}-\d{2}$`)
	reFreeNASLegacy = regexp.MustCompile(`^auto-\d{8}\.\d{4}(?:\d{2})?-\d+[hdwmy]$`)
	// zrepl: a user-defined prefix (zrepl_ by convention, zrepl_snap_…)
	// then the timestamp_format: dense 20060102_150405_000 (the default,
	// UTC), human 2006-01-02_15:04:05, iso-8601 with the "+" of the zone
	// written "_", or unix-seconds.
	reZrepl = regexp.MustCompile(`^zrepl_(?:.*_)?(?:\d{8}_\d{6}_\d{3}|\d{4}-\d{2}-\d{2}_\d{2}:\d{2}(?::\d{2})?|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[-_]\d{2}:?\d{2})|\d{10})$`)
)

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
		if m := reSanoid.FindStringSubmatch(name); m != nil {
			return ToolSanoid, m[1], labelPeriods[m[1]], true
		}
		if reTrueNAS.MatchString(name) || reFreeNASLegacy.MatchString(name) {
			return ToolTrueNAS, "", 0, true
		}
	case "sync":
		if reSyncoid.MatchString(name) {
			return ToolSyncoid, "", 0, true
		}
	case "zfs-":
		if m := reZfsAutoSnap.FindStringSubmatch(name); m != nil {
			return ToolZfsAutoSnapshot, m[1], labelPeriods[m[1]], true
		}
	case "pyzn":
		if m := rePyznap.FindStringSubmatch(name); m != nil {
			return ToolPyznap, m[1], labelPeriods[m[1]], true
		}
	case "zrep":
		if reZrepl.MatchString(name) {
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
