package zfs

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// snapshotRow is one row of a real `zfs list -t snapshot` table.
type snapshotRow struct {
	full, used string
}

// readSnapshotTable reads the NAME and USED columns of a public `zfs list
// -t snapshot` table in testdata/zfs-list-snapshots, skipping its header.
func readSnapshotTable(t testing.TB, name string) []snapshotRow {
	t.Helper()
	sc := bufio.NewScanner(openFixture(t, "zfs-list-snapshots", name))
	var rows []snapshotRow
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] == "NAME" {
			continue
		}
		rows = append(rows, snapshotRow{full: f[0], used: f[1]})
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", name)
	}
	return rows
}

// Every name of the public listings (docs/snapshot-names.md cites them) is
// recognised as its tool names it.
func TestRecognizePublicNames(t *testing.T) {
	cases := []struct {
		file string
		want map[string]int // tool/label → count
	}{
		{"sanoid-issue-1014-list-t-snapshot.txt", map[string]int{"sanoid/monthly": 1, "sanoid/daily": 5}},
		{"sanoid-issue-43-autosnap-and-syncoid.txt", map[string]int{"/": 2, "syncoid/": 4, "sanoid/daily": 5, "sanoid/hourly": 2}},
		{"zfs-auto-snapshot-nextcloud-vm-pr-718.txt", map[string]int{"zfs-auto-snapshot/hourly": 14, "zfs-auto-snapshot/": 1, "zfs-auto-snapshot/daily": 1}},
		{"pyznap-issue-7-list-t-snapshot.txt", map[string]int{"pyznap/daily": 1, "pyznap/hourly": 12}},
		{"zrepl-nixpkgs-pr-113090-list-t-snapshot.txt", map[string]int{"zrepl/": 17}},
		{"truenas-kdeldycke-blog-list-t-snapshot.txt", map[string]int{"truenas/": 3}},
	}
	for _, c := range cases {
		got := map[string]int{}
		for _, r := range readSnapshotTable(t, c.file) {
			_, snap, _ := strings.Cut(r.full, "@")
			tool, label, _, _ := RecognizeSnapshot(snap)
			got[tool+"/"+label]++
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.file, got, c.want)
		}
	}
}

func TestRecognizeSnapshot(t *testing.T) {
	// Names quoted in docs/snapshot-names.md (from the tools' sources,
	// docs and issue trackers) and the issue's examples; the few marked
	// "constructed" follow a tool's documented format where no public
	// example was found.
	cases := []struct {
		name, tool, label string
		period            time.Duration
	}{
		{"autosnap_2026-11-30_00:00:01_daily", ToolSanoid, "daily", 24 * time.Hour},
		{"autosnap_2025-08-11_02:35:41_yearly", ToolSanoid, "yearly", 366 * 24 * time.Hour},
		{"autosnap_2025-08-11_02:35:41_weekly", ToolSanoid, "weekly", 7 * 24 * time.Hour},
		{"autosnap_2023-07-26_09:00:13_hourly", ToolSanoid, "hourly", time.Hour},
		{"autosnap_2021-03-01_00:00:01_frequently", ToolSanoid, "frequently", 15 * time.Minute}, // constructed
		{"syncoid_Host1_2016-10-17:11:00:56", ToolSyncoid, "", 0},
		{"syncoid_media_2016-08-15:12:34:52", ToolSyncoid, "", 0},
		{"syncoid_zwatch-e2e_2026-11-30_10:00:00-GMT01:00", ToolSyncoid, "", 0}, // constructed (syncoid since 2025)
		{"syncoid_backup_2026-11-30_10:00:00-GMT-05:00", ToolSyncoid, "", 0},    // constructed
		{"zfs-auto-snap_daily-2026-11-30-0000", ToolZfsAutoSnapshot, "daily", 24 * time.Hour},
		{"zfs-auto-snap_frequent-2020-12-29-0234", ToolZfsAutoSnapshot, "frequent", 15 * time.Minute},
		{"zfs-auto-snap_monthly-2020-12-01-0552", ToolZfsAutoSnapshot, "monthly", 31 * 24 * time.Hour}, // constructed
		{"zfs-auto-snap_test-2014-12-04-2058", ToolZfsAutoSnapshot, "test", 0},
		{"zfs-auto-snap-2018-11-23-2229", ToolZfsAutoSnapshot, "", 0},
		{"auto-2026-11-30_00-00", ToolTrueNAS, "", 0},
		{"auto-2023-09-25_00-00", ToolTrueNAS, "", 0},
		{"auto-20190101.0000-2w", ToolTrueNAS, "", 0},   // the issue's example
		{"auto-20190303.0900-3m", ToolTrueNAS, "", 0},   // in a public note whose repository the index does not name
		{"auto-20200117.060000-2w", ToolTrueNAS, "", 0}, // constructed (11.3 legacy, with %S)
		{"zrepl_20261130_000000_000", ToolZrepl, "", 0},
		{"zrepl_snapjob_20210221_014828_000", ToolZrepl, "", 0},
		{"zrepl_2023-06-01_00:15:00", ToolZrepl, "", 0}, // zrepl#713, timestamp_format human
		{"zrepl_20220920_092503_000", ToolZrepl, "", 0},
		{"zrepl_snap_2026-11-30T00:00:00_02:00", ToolZrepl, "", 0}, // constructed from the zrepl docs
		{"zrepl_1796000000", ToolZrepl, "", 0},                     // constructed (unix-seconds)
		{"pyznap_2026-11-30_00:00:00_daily", ToolPyznap, "daily", 24 * time.Hour},
		{"pyznap_2023-03-20_12:01:12_frequent", ToolPyznap, "frequent", 15 * time.Minute},
	}
	for _, c := range cases {
		tool, label, period, ok := RecognizeSnapshot(c.name)
		if !ok || tool != c.tool || label != c.label || period != c.period {
			t.Errorf("%s: %q %q %v %v, want %q %q %v", c.name, tool, label, period, ok, c.tool, c.label, c.period)
		}
	}
	for _, name := range []string{
		"", "x", "freshinstall-updates", "pre-inspect", "2019-08-15_04.00.01--1m",
		"autosnap_2026-11-30_daily", "auto-2026-11-30", "zrepl_manual", "syncoid_host",
		"zfs-auto-snap_daily", "pyznap_2026-11-30_00:00:00", "autosnap_2026-11-30_00:00:01_daily\n",
		"hourly-2025-10-16-10-16", strings.Repeat("autosnap_", 40),
	} {
		if tool, _, _, ok := RecognizeSnapshot(name); ok {
			t.Errorf("%q recognised as %s", name, tool)
		}
	}
}

func ExampleRecognizeSnapshot() {
	tool, label, period, ok := RecognizeSnapshot("autosnap_2026-11-30_00:00:01_daily")
	fmt.Println(tool, label, period, ok)
	// Output: sanoid daily 24h0m0s true
}

// The name forms as regular expressions: the specification the hand-made
// matchers of snapnames.go must agree with (TestRecognizeAgreesWithReference
// and FuzzRecognizeSnapshot check it).
var (
	refSanoid        = regexp.MustCompile(`^autosnap_\d{4}-\d{2}-\d{2}_\d{2}:\d{2}:\d{2}_([a-z]+)$`)
	refSyncoid       = regexp.MustCompile(`^syncoid_.+_\d{4}-\d{2}-\d{2}[_:]\d{2}:\d{2}:\d{2}(?:-GMT-?\d{2}:\d{2})?$`)
	refZfsAutoSnap   = regexp.MustCompile(`^zfs-auto-snap(?:_([A-Za-z0-9.:]*))?-\d{4}-\d{2}-\d{2}-\d{4}$`)
	refPyznap        = regexp.MustCompile(`^pyznap_\d{4}-\d{2}-\d{2}_\d{2}:\d{2}:\d{2}_([a-z]+)$`)
	refTrueNAS       = regexp.MustCompile(`^auto-\d{4}-\d{2}-\d{2}_\d{2}-\d{2}$`)
	refFreeNASLegacy = regexp.MustCompile(`^auto-\d{8}\.\d{4}(?:\d{2})?-\d+[hdwmy]$`)
	refZrepl         = regexp.MustCompile(`^zrepl_(?:.*_)?(?:\d{8}_\d{6}_\d{3}|\d{4}-\d{2}-\d{2}_\d{2}:\d{2}(?::\d{2})?|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[-_]\d{2}:?\d{2})|\d{10})$`)
)

// referenceRecognize is RecognizeSnapshot written with the expressions.
func referenceRecognize(name string) (tool, label string, ok bool) {
	if len(name) > 255 || len(name) < 5 {
		return "", "", false
	}
	if m := refSanoid.FindStringSubmatch(name); m != nil {
		return ToolSanoid, m[1], true
	}
	if refTrueNAS.MatchString(name) || refFreeNASLegacy.MatchString(name) {
		return ToolTrueNAS, "", true
	}
	if refSyncoid.MatchString(name) {
		return ToolSyncoid, "", true
	}
	if m := refZfsAutoSnap.FindStringSubmatch(name); m != nil {
		return ToolZfsAutoSnapshot, m[1], true
	}
	if m := refPyznap.FindStringSubmatch(name); m != nil {
		return ToolPyznap, m[1], true
	}
	if refZrepl.MatchString(name) {
		return ToolZrepl, "", true
	}
	return "", "", false
}

func TestRecognizeAgreesWithReference(t *testing.T) {
	names := []string{
		"auto-20190101.000000-2w", "auto-20190101.00-2w", "auto-20190101.0000-w", "auto-20190101.0000-12y",
		"auto-20190101.0000-2x", "auto-20190101.000000", "syncoid__2026-11-30_00:00:01", "syncoid_a_b_2026-11-30:00:00:01-GMT-05:00",
		"syncoid_h_2026-11-30_00:00:01-GMT0500", "zfs-auto-snap_-2026-11-30-0000", "zfs-auto-snap_a-b-2026-11-30-0000",
		"zrepl_x_2026-11-30T00:00:00.123Z", "zrepl_2026-11-30T00:00:00.Z", "zrepl_2026-11-30T00:00:00_0200",
		"zrepl__20261130_000000_000", "zrepl_a\nb_20261130_000000_000", "syncoid_a\n_2026-11-30_00:00:01",
		"zrepl_2026-11-30_00:00", "zrepl_179600000", "autosnap_2026-11-30_00:00:01_", "pyznap_2026-11-30_00:00:00_Daily",
	}
	for _, file := range []string{"sanoid-issue-1014-list-t-snapshot.txt", "sanoid-issue-43-autosnap-and-syncoid.txt",
		"zfs-auto-snapshot-nextcloud-vm-pr-718.txt", "pyznap-issue-7-list-t-snapshot.txt",
		"zrepl-nixpkgs-pr-113090-list-t-snapshot.txt", "truenas-kdeldycke-blog-list-t-snapshot.txt"} {
		for _, r := range readSnapshotTable(t, file) {
			_, snap, _ := strings.Cut(r.full, "@")
			names = append(names, snap)
		}
	}
	for _, n := range names {
		tool, label, _, ok := RecognizeSnapshot(n)
		rt, rl, rok := referenceRecognize(n)
		if tool != rt || label != rl || ok != rok {
			t.Errorf("%q: %q %q %v, the expressions say %q %q %v", n, tool, label, ok, rt, rl, rok)
		}
	}
}
