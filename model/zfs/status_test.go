package zfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// parseStatusFile parses a real capture from testdata/zpool-status.
func parseStatusFile(t *testing.T, name string) []*Pool {
	t.Helper()
	f, err := os.Open(filepath.Join(repoTestdata, "zpool-status", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pools, err := ParseStatusTextIn(f, time.UTC)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pools
}

// onePool parses a fixture that must hold exactly one pool.
func onePool(t *testing.T, name string) *Pool {
	t.Helper()
	pools := parseStatusFile(t, name)
	if len(pools) != 1 {
		t.Fatalf("%s: %d pools, want 1", name, len(pools))
	}
	return pools[0]
}

// findVdev returns the first vdev named name anywhere in p.
func findVdev(p *Pool, name string) *Vdev {
	var walk func([]*Vdev) *Vdev
	walk = func(vs []*Vdev) *Vdev {
		for _, v := range vs {
			if v.Name == name {
				return v
			}
			if f := walk(v.Children); f != nil {
				return f
			}
		}
		return nil
	}
	for _, cv := range p.AllVdevs() {
		if f := walk([]*Vdev{cv.Vdev}); f != nil {
			return f
		}
	}
	return nil
}

func mustVdev(t *testing.T, p *Pool, name string) *Vdev {
	t.Helper()
	v := findVdev(p, name)
	if v == nil {
		t.Fatalf("pool %s: no vdev %q", p.Name, name)
	}
	return v
}

func TestStatusGUIDWas(t *testing.T) {
	p := onePool(t, "freebsd-raidz1-guid-unavail-was-dev.txt")
	if p.State != StateDegraded || p.MsgID != "ZFS-8000-2Q" {
		t.Errorf("state/msgid = %s/%s", p.State, p.MsgID)
	}
	v := mustVdev(t, p, "16031226974783295807")
	if v.State != StateUnavail || v.GUID != "16031226974783295807" || v.Was != "/dev/gpt/usb2" ||
		v.Path != "/dev/gpt/usb2" || v.Type != VdevDisk || len(v.Notes) != 0 {
		t.Errorf("GUID leaf = %+v", v)
	}
	if rz := p.Vdevs[0]; rz.Type != VdevRaidz || rz.Parity != 1 || len(rz.Children) != 4 {
		t.Errorf("raidz = %+v", rz)
	}
}

func TestStatusReplacingResilver(t *testing.T) {
	p := onePool(t, "freebsd-raidz1-replacing-guid-was-dev-resilvering.txt")
	r := mustVdev(t, p, "replacing-2")
	if r.Type != VdevReplacing || r.State != StateDegraded || len(r.Children) != 2 {
		t.Fatalf("replacing = %+v", r)
	}
	if n := r.Children[1]; n.Name != "gpt/usb5" || len(n.Notes) != 1 || n.Notes[0] != "(resilvering)" {
		t.Errorf("new disk = %+v", n)
	}
	s := p.Scan
	if s.Function != ScanResilver || s.State != ScanStateScanning || s.PercentDone != 11.66 ||
		s.ETASeconds != 53 || !s.Approximate {
		t.Errorf("scan = %+v", s)
	}
	// "631M / 631M scanned, 73.5M / 630M issued at 10.5M/s" / "2.29M resilvered"
	if s.ExaminedBytes != 631<<20 || s.IssuedBytes != nice(73.5, 20) ||
		s.RateBytes != nice(10.5, 20) || s.RepairedBytes != nice(2.29, 20) {
		t.Errorf("scan bytes = %+v", s)
	}
	if want := time.Date(2025, 12, 24, 11, 16, 58, 0, time.UTC); s.Start == nil || !s.Start.Equal(want) {
		t.Errorf("scan start = %v", s.Start)
	}
}

func TestStatusSparesInUse(t *testing.T) {
	p := onePool(t, "zol-0.6.5-raidz2-spare-inuse-tabs.txt")
	if len(p.Spares) != 1 {
		t.Fatalf("spares = %d", len(p.Spares))
	}
	s := p.Spares[0]
	if s.Name != "sdd" || s.State != StateInUse || len(s.Notes) != 1 || s.Notes[0] != "currently in use" {
		t.Errorf("spare = %+v", s)
	}
	if len(p.Vdevs) != 1 || len(p.Vdevs[0].Children) != 6 {
		t.Errorf("data vdevs = %d", len(p.Vdevs))
	}
	avail := onePool(t, "solaris10-mirror-spares-avail-trailing-spaces.txt")
	if len(avail.Spares) != 2 || avail.Spares[1].State != StateAvail || avail.Spares[1].Name != "c2t2d0" {
		t.Errorf("spares = %+v", avail.Spares)
	}
}

func TestStatusDraid(t *testing.T) {
	p := onePool(t, "openzfs-2.1-draid1-sequential-resilver-spare-inuse.txt")
	d := p.Vdevs[0]
	if d.Type != VdevDraid || d.Parity != 1 || d.DraidData != 4 || d.DraidSpares != 1 || len(d.Children) != 11 {
		t.Fatalf("draid = %+v", d)
	}
	sp := mustVdev(t, p, "spare-6")
	if sp.Type != VdevSpare || len(sp.Children) != 2 || sp.Children[1].Type != VdevDSpare {
		t.Errorf("spare-6 = %+v", sp)
	}
	if len(p.Spares) != 1 || p.Spares[0].Type != VdevDSpare || p.Spares[0].State != StateInUse {
		t.Errorf("spares = %+v", p.Spares)
	}
	if p.Scan.Function != ScanResilver || p.Scan.PercentDone != 57.17 {
		t.Errorf("scan = %+v", p.Scan)
	}
	// The capture ends without an "errors:" line.
	if p.DataErrors.Count != 0 || p.DataErrors.Files == nil {
		t.Errorf("errors = %+v", p.DataErrors)
	}
}

func TestStatusAbbreviatedCounters(t *testing.T) {
	p := onePool(t, "freebsd-handbook-scrub-repaired-cksum-2.72K-MANGLED-WS.txt")
	v := mustVdev(t, p, "ada1")
	if !v.ErrorsApproximate || v.ChecksumErrors != 2785 {
		t.Errorf("ada1 = %+v", v)
	}
	if a := mustVdev(t, p, "ada0"); a.ErrorsApproximate {
		t.Errorf("ada0 marked approximate")
	}
	if p.Scan.State != ScanStateFinished || p.Scan.RepairedBytes != nice(66.5, 20) {
		t.Errorf("scan = %+v", p.Scan)
	}
}

func TestStatusScanForms(t *testing.T) {
	cases := []struct {
		file       string
		fn, state  string
		percent    float64
		total, eta uint64
	}{
		{"freebsd-single-scrub-in-progress.txt", ScanScrub, ScanStateScanning, 14.81, 3886945402, 51},
		{"freebsd-raidz2-faulted-during-resilver-no-estimate.txt", ScanResilver, ScanStateScanning, 28.88, 2029372047, 0},
		{"zol-0.7rc-pool-unavail-insufficient-replicas-suspended-errlog.txt", ScanScrub, ScanStateScanning, 75.44, 1 << 30, 240},
		{"zol-0.6-mirror-resilver-in-progress-logs-cache-tabs.txt", ScanResilver, ScanStateScanning, 0.39, 347 << 30, 2760},
		{"freebsd-raidz2-degraded-faulted-too-many-errors.txt", ScanResilver, ScanStateFinished, 100, 0, 0},
		{"linux-truenas-raidz2-online-scrubbed-tabs.txt", ScanScrub, ScanStateFinished, 100, 0, 0},
		{"zol-0.6-raidz2-io-failure-HC-data-errors.txt", ScanNone, ScanStateNone, 0, 0, 0},
		{"solaris10-mirror-degraded-unavail-cannot-open.txt", ScanNone, ScanStateNone, 0, 0, 0},
		{"truenas-openzfs-2.2-raidz2-file-vdev-offline-no-scan.txt", ScanNone, ScanStateNone, 0, 0, 0},
	}
	for _, c := range cases {
		s := onePool(t, c.file).Scan
		if s.Function != c.fn || s.State != c.state || s.PercentDone != c.percent ||
			s.TotalBytes != c.total || uint64(s.ETASeconds) != c.eta {
			t.Errorf("%s: scan = %+v", c.file, s)
		}
	}
	fin := onePool(t, "freebsd-single-scrub-data-errors-use-v.txt").Scan
	want := time.Date(2022, 8, 29, 18, 18, 32, 0, time.UTC)
	if fin.Errors != 1 || fin.End == nil || !fin.End.Equal(want) || fin.Approximate {
		t.Errorf("finished scrub = %+v", fin)
	}
}

func TestStatusDataErrors(t *testing.T) {
	p := onePool(t, "freebsd-single-status-v-permanent-errors.txt")
	if p.DataErrors.Count != 1 || len(p.DataErrors.Files) != 1 || p.DataErrors.Files[0] != "/ztest/dummy" {
		t.Errorf("errors = %+v", p.DataErrors)
	}
	m := onePool(t, "zol-0.7.5-mirror-permanent-errors-metadata-tabs.txt")
	if got := strings.Join(m.DataErrors.Files, ","); got != "<metadata>:<0x0>,<metadata>:<0x39>" {
		t.Errorf("files = %s", got)
	}
	u := onePool(t, "freebsd-single-scrub-data-errors-use-v.txt")
	if u.DataErrors.Count != 1 || len(u.DataErrors.Files) != 0 {
		t.Errorf("use -v errors = %+v", u.DataErrors)
	}
	s := onePool(t, "zol-0.8.1-single-disk-unavail-JQ-suspended-two-errors-lines.txt")
	if s.DataErrors.Count != 5 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "suspended") {
		t.Errorf("suspended: errors = %+v notes = %q", s.DataErrors, s.Notes)
	}
	if s.Root == nil || s.Root.State != StateUnavail || len(s.Root.Notes) != 1 || s.Root.Notes[0] != "insufficient replicas" {
		t.Errorf("root = %+v", s.Root)
	}
}

func TestStatusMultiplePoolsAndFileVdev(t *testing.T) {
	pools := parseStatusFile(t, "zol-0.7-multiple-pools-9P-cksum-file-vdev-tabs.txt")
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "Backups,Data,default" {
		t.Fatalf("pools = %v", names)
	}
	if v := mustVdev(t, pools[1], "ata-TOSHIBA_DT01ACA300_365XDT3KS"); v.ChecksumErrors != 2 || v.Path != v.Name {
		t.Errorf("cksum leaf = %+v", v)
	}
	if pools[1].MsgID != "ZFS-8000-9P" {
		t.Errorf("msgid = %q", pools[1].MsgID)
	}
	f := pools[2].Vdevs[0]
	if f.Type != VdevFile || f.Path != "/var/lib/lxd/disks/default.img" {
		t.Errorf("file vdev = %+v", f)
	}
}

func TestStatusFreeBSDAndClasses(t *testing.T) {
	p := onePool(t, "freebsd-removal-in-progress-removing.txt")
	if !strings.HasPrefix(p.Remove, "Evacuation of /dev/da0p4 in progress") || len(p.Vdevs) != 2 {
		t.Errorf("remove = %q vdevs = %d", p.Remove, len(p.Vdevs))
	}
	if v := p.Vdevs[0]; v.Name != "da0p4" || v.Type != VdevDisk || len(v.Notes) != 1 || v.Notes[0] != "(removing)" {
		t.Errorf("da0p4 = %+v", v)
	}
	lc := onePool(t, "zol-0.6-mirror-resilver-in-progress-logs-cache-tabs.txt")
	if len(lc.Logs) != 1 || lc.Logs[0].Type != VdevMirror || len(lc.Logs[0].Children) != 2 || len(lc.Cache) != 2 {
		t.Errorf("logs/cache = %+v / %+v", lc.Logs, lc.Cache)
	}
	if len(lc.Vdevs) != 1 {
		t.Errorf("data vdevs = %d", len(lc.Vdevs))
	}
	old := onePool(t, "solaris-mirror-degraded-offline-old-scrub-line.txt")
	if v := old.Vdevs[0]; v.Type != VdevMirror || len(v.Children) != 2 || v.Children[1].State != StateOffline {
		t.Errorf("solaris mirror = %+v", v)
	}
}

func TestStatusNoPools(t *testing.T) {
	for _, in := range []string{"no pools available\n", "all pools are healthy\n", "pool 'tank' is healthy\n", "", "\n"} {
		pools, err := ParseStatusText(strings.NewReader(in))
		if err != nil || len(pools) != 0 {
			t.Errorf("%q: pools=%v err=%v", in, pools, err)
		}
	}
	for _, in := range []string{"hello world\n", "{\"a\":1}", "  pool\n"} {
		if _, err := ParseStatusText(strings.NewReader(in)); err == nil {
			t.Errorf("%q: want error", in)
		}
	}
}

func TestStatusJSONManPage(t *testing.T) {
	f, err := os.Open(filepath.Join(repoTestdata, "zpool-status", "openzfs-2.3-manpage-status-j-c-vendor-model-size-jq.json"))
	if err != nil {
		t.Skip("man page JSON example not present:", err)
	}
	defer f.Close()
	pools, err := ParseStatusJSON(f)
	if err != nil || len(pools) != 1 {
		t.Fatalf("pools=%d err=%v", len(pools), err)
	}
	p := pools[0]
	if p.GUID != "3920273586464696295" || p.Status != "" || p.Root == nil || p.Root.State != StateOnline {
		t.Errorf("pool = %+v", p)
	}
	if len(p.Vdevs) != 1 || p.Vdevs[0].Type != VdevRaidz || len(p.Vdevs[0].Children) != 3 ||
		p.Vdevs[0].Children[0].State != StateOnline { // "HEALTHY" in this early format
		t.Errorf("vdevs = %+v", p.Vdevs)
	}
	if len(p.Special) != 1 || len(p.Dedup) != 1 || p.Dedup[0].Type != VdevMirror {
		t.Errorf("special/dedup = %+v %+v", p.Special, p.Dedup)
	}
	// Order of the JSON object is kept.
	if p.Vdevs[0].Children[2].Name != "e9ddba5f-f948-4734-a472-cb8aa5f0ff65" {
		t.Errorf("child order lost")
	}
}

func TestStatusJSONErrors(t *testing.T) {
	for _, in := range []string{"", "[]", "{", `{"pools": 3}`, `{"foo": {}}`, `{"pools": {"a": 1}}`} {
		if _, err := ParseStatusJSON(strings.NewReader(in)); err == nil {
			t.Errorf("%q: want error", in)
		}
	}
	pools, err := ParseStatusJSON(strings.NewReader(`{"output_version": {"command": "zpool status"}}`))
	if err != nil || len(pools) != 0 {
		t.Errorf("no pools: %v %v", pools, err)
	}
}

func TestParseNiceNum(t *testing.T) {
	cases := []struct {
		in    string
		want  uint64
		exact bool
	}{
		{"0", 0, true}, {"0B", 0, true}, {"512B", 512, true}, {"1.2K", 1228, false},
		{"37M", 37 << 20, false}, {"2.51T", nice(2.51, 40), false}, {"24,5T", nice(24.5, 40), false},
	}
	for _, c := range cases {
		got, exact, err := parseNiceNum(c.in)
		if err != nil || got != c.want || exact != c.exact {
			t.Errorf("%s: %d %v %v", c.in, got, exact, err)
		}
	}
	for _, bad := range []string{"", "K", "x1", "-1K", "1.2Q"} {
		if _, _, err := parseNiceNum(bad); err == nil {
			t.Errorf("%q: want error", bad)
		}
	}
}

func TestParseDurationText(t *testing.T) {
	cases := map[string]time.Duration{
		"00:00:13":        13 * time.Second,
		"1 days 14:05:30": 38*time.Hour + 5*time.Minute + 30*time.Second,
		"0h46m":           46 * time.Minute,
		"123h32m":         123*time.Hour + 32*time.Minute,
	}
	for in, want := range cases {
		if got, ok := parseDurationText(in); !ok || got != want {
			t.Errorf("%s: %v %v", in, got, ok)
		}
	}
}

// nice is the value zfs_nicenum abbreviates as f with a 2^shift unit.
func nice(f float64, shift uint) uint64 {
	return uint64(f * float64(uint64(1)<<shift))
}

func TestPlace(t *testing.T) {
	for _, c := range [][3]string{
		{"tank", "mirror-0", "tank/mirror-0"},
		{"tank", "raidz2-1", "tank/raidz2-1"},
		{"tank", "draid1:4d:6c:1s-0", "tank/draid1:4d:6c:1s-0"},
		{"hung", "/dev/disk/by-id/scsi-35000c500a0000001-part1", "hung"},
		{"tank", "sdb", "tank"},
		{"tank", "draid1-0-0", "tank"},
		{"tank", "", "tank"},
	} {
		if got := Place(c[0], c[1]); got != c[2] {
			t.Errorf("Place(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
