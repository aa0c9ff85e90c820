package zfs

import (
	"fmt"
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// nameTimes are the timestamp forms of the public listings' names, with
// their Go layouts, tried in order.
var nameTimes = []struct {
	re     *regexp.Regexp
	layout string
}{
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}_\d{2}:\d{2}:\d{2}`), "2006-01-02_15:04:05"}, // sanoid, pyznap
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}_\d{2}-\d{2}$`), "2006-01-02_15-04"},         // TrueNAS
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}:\d{2}:\d{2}:\d{2}`), "2006-01-02:15:04:05"}, // syncoid before 2020
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}-\d{4}$`), "2006-01-02-1504"},                // zfs-auto-snapshot
	{regexp.MustCompile(`\d{8}_\d{6}`), "20060102_150405"},                             // zrepl dense
}

// derivedListing turns a public `zfs list -t snapshot` table into the
// `zfs list -Hp -t snapshot -o name,creation,used` form the collector
// reads: a DERIVED input. The names and the order are real; creation is
// read from the timestamp in each name (a name without one, a manual
// snapshot, gets the creation of the row before it, or one hour before
// the first timestamp when it comes first), and used is the table's
// rounded USED column in bytes.
func derivedListing(t testing.TB, file string) string {
	t.Helper()
	rows := readSnapshotTable(t, file)
	times := make([]time.Time, len(rows))
	var last time.Time
	for i, r := range rows {
		for _, nt := range nameTimes {
			if m := nt.re.FindString(r.full); m != "" {
				ts, err := time.Parse(nt.layout, m)
				if err != nil {
					t.Fatalf("%s: %v", r.full, err)
				}
				times[i] = ts
				break
			}
		}
		if times[i].IsZero() {
			times[i] = last
		}
		last = times[i]
	}
	for i := range times {
		if !times[i].IsZero() {
			for j := 0; j < i; j++ {
				times[j] = times[i].Add(-time.Hour)
			}
			break
		}
	}
	var sb strings.Builder
	for i, r := range rows {
		used, _, err := parseNiceNum(r.used)
		if err != nil {
			t.Fatalf("%s: used %q: %v", file, r.used, err)
		}
		fmt.Fprintf(&sb, "%s\t%d\t%d\n", r.full, times[i].Unix(), used)
	}
	return sb.String()
}

func summarizeString(t *testing.T, in string) ([]SnapshotStats, int) {
	t.Helper()
	stats, total, err := SummarizeSnapshots(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	return stats, total
}

func statsOf(stats []SnapshotStats, dataset string) *SnapshotStats {
	for i := range stats {
		if stats[i].Dataset == dataset {
			return &stats[i]
		}
	}
	return nil
}

func utc(layout, v string) time.Time {
	ts, err := time.Parse(layout, v)
	if err != nil {
		panic(err)
	}
	return ts
}

func TestSummarizePublicListings(t *testing.T) {
	const sanoidTime = "2006-01-02_15:04:05"
	cases := []struct {
		file, dataset string
		count         int
		tool, label   string
		period        time.Duration
		newest        string // scheme's newest name
	}{
		{"sanoid-issue-43-autosnap-and-syncoid.txt", "rpool/Win7", 10, ToolSanoid, "hourly", time.Hour, "autosnap_2016-07-06_16:00:02_hourly"},
		{"sanoid-issue-1014-list-t-snapshot.txt", "ZFS_Backup/ZFS_HDD/shareddata", 6, ToolSanoid, "daily", 24 * time.Hour, "autosnap_2025-07-07_00:00:03_daily"},
		{"zfs-auto-snapshot-nextcloud-vm-pr-718.txt", "ncdata", 16, ToolZfsAutoSnapshot, "hourly", time.Hour, "zfs-auto-snap_hourly-2018-11-24-1117"},
		{"pyznap-issue-7-list-t-snapshot.txt", "tank/p3600backup/subvol-125-disk-1", 13, ToolPyznap, "hourly", time.Hour, "pyznap_2018-03-22_12:00:01_hourly"},
		// zrepl names carry no period: the largest of the last gaps (11m44s
		// between 03:33:28 and 03:45:12 on tank/test, 15m on tank/test/dir).
		{"zrepl-nixpkgs-pr-113090-list-t-snapshot.txt", "tank/test", 11, ToolZrepl, "", 11*time.Minute + 44*time.Second, "zrepl_snapjob_20210221_035512_000"},
		{"zrepl-nixpkgs-pr-113090-list-t-snapshot.txt", "tank/test/dir", 6, ToolZrepl, "", 15 * time.Minute, "zrepl_snapjob_20210221_031828_000"},
		{"truenas-kdeldycke-blog-list-t-snapshot.txt", "tank/my-data", 3, ToolTrueNAS, "", 24 * time.Hour, "auto-2021-09-04_00-00"},
	}
	for _, c := range cases {
		stats, total := summarizeString(t, derivedListing(t, c.file))
		st := statsOf(stats, c.dataset)
		if st == nil || total < c.count {
			t.Fatalf("%s: no %s in %+v", c.file, c.dataset, stats)
		}
		if st.Count != c.count || st.Scheme == nil {
			t.Fatalf("%s: %s count %d scheme %+v", c.file, c.dataset, st.Count, st.Scheme)
		}
		sc := st.Scheme
		if sc.Tool != c.tool || sc.Label != c.label || sc.Period != c.period || sc.NewestName != c.newest {
			t.Errorf("%s: %s scheme %+v", c.file, c.dataset, *sc)
		}
	}
	// The syncoid markers and manual snapshots make no scheme, and the
	// newest snapshot of the dataset is the syncoid one.
	stats, total := summarizeString(t, derivedListing(t, "sanoid-issue-43-autosnap-and-syncoid.txt"))
	if total != 13 || len(stats) != 2 {
		t.Fatalf("total %d, %d datasets", total, len(stats))
	}
	kvm := statsOf(stats, "rpool/KVM/UbuntuMATE")
	if kvm.Scheme != nil || kvm.Count != 3 || kvm.NewestName != "syncoid_Powerturtle_2016-06-13:23:58:27" {
		t.Errorf("UbuntuMATE %+v", kvm)
	}
	win := statsOf(stats, "rpool/Win7")
	wantNewest := utc(sanoidTime, "2016-07-06_16:00:02")
	if !win.Newest.Equal(wantNewest) || !win.Scheme.Newest.Equal(wantNewest) {
		t.Errorf("Win7 newest %v, scheme %v", win.Newest, win.Scheme.Newest)
	}
	// 2.24G + 71.4M + 26.8M + 82.9M + 795M + 282M + 257M (binary units), as
	// the table rounds them: 3,993,879,181 bytes.
	if win.UsedBytes < 3_990_000_000 || win.UsedBytes > 4_000_000_000 {
		t.Errorf("Win7 used %d", win.UsedBytes)
	}
}

// The summary does not depend on the order of the lines.
func TestSummarizeUnsorted(t *testing.T) {
	for _, file := range []string{"zrepl-nixpkgs-pr-113090-list-t-snapshot.txt", "sanoid-issue-43-autosnap-and-syncoid.txt"} {
		in := derivedListing(t, file)
		want, _ := summarizeString(t, in)
		lines := strings.Split(strings.TrimSuffix(in, "\n"), "\n")
		rnd := rand.New(rand.NewSource(1))
		for i := 0; i < 5; i++ {
			rnd.Shuffle(len(lines), func(a, b int) { lines[a], lines[b] = lines[b], lines[a] })
			got, _ := summarizeString(t, strings.Join(lines, "\n")+"\n")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s shuffled:\n%+v\nwant\n%+v", file, got, want)
			}
		}
	}
}

// CONSTRUCTED lines (not a capture) for the cases the public listings lack.
func TestSummarizeShapes(t *testing.T) {
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).Unix()
	line := func(name string, at int64, used int) string {
		return fmt.Sprintf("%s\t%d\t%d\n", name, base+at, used)
	}
	var in strings.Builder
	// A name with blanks and an @ in the snapshot part (split at the first @).
	in.WriteString(line("tank/my photos@autosnap_2026-11-30_00:00:00_daily", 0, 10))
	in.WriteString(line("tank/my photos@manual @ noon", 43200, 5))
	in.WriteString(line("tank/my photos@x#y", 100, 0)) // not a valid ZFS name; still one snapshot
	// sanoid frequently run every hour: the gaps lengthen the 15 minutes.
	for h := int64(0); h < 6; h++ {
		in.WriteString(line("tank/freq@autosnap_2026-11-30_00:00:00_frequently", h*3600, 0))
	}
	// Two tools: the shortest period wins, judged on that tool's newest.
	in.WriteString(line("tank/two@zfs-auto-snap_hourly-2026-11-30-0000", 0, 0))
	in.WriteString(line("tank/two@zfs-auto-snap_hourly-2026-11-30-0100", 3600, 0))
	in.WriteString(line("tank/two@autosnap_2026-11-30_02:00:00_daily", 7200, 0))
	// One TrueNAS snapshot: no gap, no period, no scheme.
	in.WriteString(line("tank/one@auto-2026-11-30_00-00", 0, 0))
	stats, total := summarizeString(t, in.String())
	if total != 13 || len(stats) != 4 {
		t.Fatalf("total %d, stats %+v", total, stats)
	}
	photos := statsOf(stats, "tank/my photos")
	if photos.Count != 3 || photos.UsedBytes != 15 || photos.NewestName != "manual @ noon" ||
		photos.Scheme == nil || photos.Scheme.NewestName != "autosnap_2026-11-30_00:00:00_daily" {
		t.Errorf("photos %+v %+v", photos, photos.Scheme)
	}
	if f := statsOf(stats, "tank/freq").Scheme; f == nil || f.Period != time.Hour || f.Label != "frequently" {
		t.Errorf("frequently %+v", f)
	}
	if s := statsOf(stats, "tank/two").Scheme; s == nil || s.Tool != ToolZfsAutoSnapshot || s.Period != time.Hour ||
		s.NewestName != "zfs-auto-snap_hourly-2026-11-30-0100" {
		t.Errorf("two tools %+v", s)
	}
	if s := statsOf(stats, "tank/one"); s.Scheme != nil || s.Count != 1 {
		t.Errorf("one %+v", s)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n"} {
		stats, total, err := SummarizeSnapshots(strings.NewReader(in))
		if err != nil || total != 0 || len(stats) != 0 {
			t.Errorf("%q: %v %d %v", in, stats, total, err)
		}
	}
}

func TestSummarizeBadInput(t *testing.T) {
	cases := []struct{ in, want string }{
		{"tank\t1796052849\t0\n", "not a snapshot name"},
		{"tank@a\tTue Dec  1 15:00 2026\t0\n", "run zfs list with -p"},
		{"tank@a\t1796052849\n", "a truncated line"},
		{"tank@a\tb\t1796052849\t0\n", "a tab inside a dataset name"},
		{"tank@a\t1796052849\tlots\n", "used of tank@a"},
		{"tank@\t1796052849\t0\n", "not a snapshot name"},
		// nas/media#kept is the bookmark of the step k capture (k1-healthy.zfs-bookmark.txt).
		{"nas/media#kept\t1795737601\t0\n", "is a bookmark, not a snapshot: list with -t snapshot only"},
	}
	for _, c := range cases {
		good := "ok@x\t1796052849\t0\n"
		stats, total, err := SummarizeSnapshots(strings.NewReader(good + c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: %v, want %q on line 2", c.in, err, c.want)
		}
		if total != 1 || len(stats) != 1 {
			t.Errorf("%q: what came before the bad line is lost: %d %v", c.in, total, stats)
		}
	}
}

// The step k capture of OpenZFS 2.3.2: snapshots named as each tool names
// them, created with the guest clock set back days.
func TestSummarizeCapturedStepK(t *testing.T) {
	stats, total, err := SummarizeSnapshots(openFixture(t, "captured/zfs-2.3.2", "k1-healthy.zfs-list-snapshots.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if total != 49 {
		t.Errorf("total %d", total)
	}
	type want struct {
		count       int
		tool, label string
		period      time.Duration
		newest      string
	}
	cases := map[string]want{
		"nas/media":         {14, ToolSanoid, "hourly", time.Hour, "autosnap_2026-11-27_05:00:01_hourly"},
		"nas/secret":        {10, ToolZfsAutoSnapshot, "frequent", 15 * time.Minute, "zfs-auto-snap_hourly-2026-11-26-0200"},
		"nas/My Documents":  {7, ToolTrueNAS, "", 24 * time.Hour, "auto-2026-11-28_00-00"},
		"nas/vault":         {6, ToolPyznap, "hourly", time.Hour, "pyznap_2026-11-27_02:00:00_hourly"},
		"nas/quota":         {6, ToolZrepl, "", time.Hour, "zrepl_20261125_050000_000"},
		"nas/ro":            {3, ToolSanoid, "hourly", time.Hour, "autosnap_2026-12-01_14:00:01_hourly"},
		"nas/secret/photos": {1, ToolZfsAutoSnapshot, "hourly", time.Hour, "zfs-auto-snap_hourly-2026-11-26-0201"},
		"nas/vol":           {1, ToolZfsAutoSnapshot, "hourly", time.Hour, "zfs-auto-snap_hourly-2026-11-29-1538"},
	}
	for ds, w := range cases {
		st := statsOf(stats, ds)
		if st == nil || st.Count != w.count || st.Scheme == nil {
			t.Errorf("%s: %+v", ds, st)
			continue
		}
		sc := st.Scheme
		if sc.Tool != w.tool || sc.Label != w.label || sc.Period != w.period || sc.NewestName != w.newest {
			t.Errorf("%s: scheme %+v", ds, *sc)
		}
	}
	// The newest snapshot of nas/media is syncoid's marker; the scheme's
	// newest is sanoid's, a manual snapshot makes no scheme.
	if m := statsOf(stats, "nas/media"); m.NewestName != "syncoid_zwatch-e2e_2026-11-27:06:00:00-GMT00:00" {
		t.Errorf("nas/media newest %q", m.NewestName)
	}
	if n := statsOf(stats, "nas"); n == nil || n.Scheme != nil || n.NewestName != "manual-before-upgrade" {
		t.Errorf("nas %+v", n)
	}
	// The listing after a bookmark: bookmarks are not listed with -t snapshot.
	if _, total, err := SummarizeSnapshots(openFixture(t, "captured/zfs-2.3.2", "k1-healthy.with-bookmark.zfs-list-snapshots.txt")); err != nil || total != 14 {
		t.Errorf("with bookmark: %d %v", total, err)
	}
	// Without -p the creation is a date: the error says to add -p.
	if _, _, err := SummarizeSnapshots(openFixture(t, "captured/zfs-2.3.2", "k1-healthy.zfs-list-H-snapshots.txt")); err == nil || !strings.Contains(err.Error(), "-p") {
		t.Errorf("zfs list -H without -p: %v", err)
	}
	if _, total, err := SummarizeSnapshots(openFixture(t, "captured/zfs-2.3.2", "k3-interrupted.zfs-list-snapshots.txt")); err != nil || total == 0 {
		t.Errorf("k3: %d %v", total, err)
	}
}
