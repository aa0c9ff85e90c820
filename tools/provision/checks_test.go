package provision

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// find returns the results of one check on one subject.
func find(cs []CheckResult, check, subject string) []CheckResult {
	var out []CheckResult
	for _, c := range cs {
		if c.Check == check && (subject == "" || c.Subject == subject) {
			out = append(out, c)
		}
	}
	return out
}

func wantStatus(t *testing.T, cs []CheckResult, check, subject string, st Status, contains string) {
	t.Helper()
	rs := find(cs, check, subject)
	for _, r := range rs {
		if r.Status == st && strings.Contains(r.Reason+" "+r.Fix+" "+r.Detail, contains) {
			return
		}
	}
	var all []string
	for _, c := range cs {
		all = append(all, fmt.Sprintf("%s %s %s: %s", c.Status, c.Check, c.Subject, c.Reason))
	}
	t.Errorf("no %s %s on %s containing %q; got:\n%s", st, check, subject, contains, strings.Join(all, "\n"))
}

func inspect(t *testing.T, host string, p *Plan, wipe bool) *Inspection {
	t.Helper()
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatalf("plan: %v", errs)
	}
	in, err := Inspect(context.Background(), loadHost(t, host), p, InspectOptions{Wipe: wipe})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func mirror(pool string, disks ...string) *Plan {
	return &Plan{Pool: pool, Vdevs: []VdevSpec{{Layout: LayoutMirror, Disks: disks}}}
}

func TestCheckDiskInUse(t *testing.T) {
	// sdb: Samsung 840 EVO with sdb1 mounted at "/srv/old data" (mountinfo
	// escapes the space) and sdb2 as swap; dos table, ext4 and swap signatures.
	in := inspect(t, "hdidle-nas", mirror("vault", "sdb", "sdc"), false)
	wantStatus(t, in.Checks, "mounted", "sdb", Fail, "sdb1 on /srv/old data")
	wantStatus(t, in.Checks, "swap", "sdb", Fail, "/dev/sdb2")
	wantStatus(t, in.Checks, "signatures", "sdb", Fail, "dos partition table")
	wantStatus(t, in.Checks, "signatures", "sdb", Fail, `ext4 labelled "old data"`)
	wantStatus(t, in.Checks, "signatures", "sdb", Fail, "--wipe")
	wantStatus(t, in.Checks, "mounted", "sdc", Pass, "")
	wantStatus(t, in.Checks, "sizes", "vdevs[0]", Warn, "3.75 TB of raw capacity is lost")
	wantStatus(t, in.Checks, "mixed-media", "vdevs[0]", Warn, "1 SSDs with 1 spinning")
	if !in.Failed() {
		t.Error("Failed() = false")
	}
}

func TestCheckWipeShowsWhatIsDestroyed(t *testing.T) {
	in := inspect(t, "hdidle-nas", mirror("vault", "sdb", "sdn"), true)
	wantStatus(t, in.Checks, "signatures", "sdb", Warn, "sdb1   0x438  ext4 0f3b5c1e-2a4d-4b8e-9c6f-1d2e3f4a5b6c old data")
	// wipe targets: partitions (last first) before the disk
	var devs []string
	for _, w := range in.Plan.Wipe {
		devs = append(devs, w.Device)
	}
	b := "/dev/disk/by-id/ata-Samsung_SSD_840_EVO_250GB_S1DBNSAF354840P"
	if got, want := strings.Join(devs, " "), b+"-part2 "+b+"-part1 "+b; got != want {
		t.Errorf("wipe targets %s, want %s", got, want)
	}
	// --wipe does not make a mounted disk usable.
	wantStatus(t, in.Checks, "mounted", "sdb", Fail, "")
}

func TestCheckPartitionAndDuplicate(t *testing.T) {
	in := inspect(t, "hdidle-nas", &Plan{Pool: "vault", Vdevs: []VdevSpec{{Layout: LayoutRaidz1, Disks: []string{"sdc", "Z300P70F", "sdb1", "ata-ST4000VN000-1H4168_Z30147EP-part1", "/dev/disk/by-id/ata-ST4000VN000-1H4168_Z30139FG"}}}}, false)
	wantStatus(t, in.Checks, "duplicate", "sdc", Fail, `sdc (vdevs[0].disks[0]) and Z300P70F (vdevs[0].disks[1]) are the same disk`)
	wantStatus(t, in.Checks, "device", "sdb", Fail, "sdb1 (vdevs[0].disks[2]) is a partition of sdb")
	wantStatus(t, in.Checks, "device", "sdg", Fail, "is a partition of sdg")
	if in.Plan != nil {
		t.Error("a plan was made from unresolvable disks")
	}
}

func TestCheckUnknownDisk(t *testing.T) {
	in := inspect(t, "hdidle-nas", mirror("vault", "sdz", "NOSUCHSERIAL"), false)
	wantStatus(t, in.Checks, "device", "sdz", Fail, "no such disk")
	wantStatus(t, in.Checks, "device", "NOSUCHSERIAL", Fail, "no such disk")
}

func TestCheckPoolNames(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"vault", ""}, {"tank.2", ""}, {"my-pool_1:a", ""},
		{"mirror1", "reserves"}, {"raidz", "reserves"}, {"draidpool", "reserves"}, {"spare", "reserves"},
		{"logs", "reserves"}, {"cache", "reserves"}, {"special", "reserves"}, {"dedup", "reserves"},
		{"c0t0d0", "Solaris"}, {"1pool", "start with a letter"}, {"po ol", "may hold only"},
		{"pool/x", "may hold only"}, {"", "empty"}, {strings.Repeat("a", 256), "longer"},
	} {
		got := CheckPoolName(c.name)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("CheckPoolName(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCheckPoolTaken(t *testing.T) {
	h := loadHost(t, "pi-usb") // zpool list shows tank
	in, err := Inspect(context.Background(), h, mirror("tank", "sdc", "sde"), InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !in.Exists || len(in.Disks) != 0 {
		t.Errorf("existing pool: Exists=%v, disks inspected %d", in.Exists, len(in.Disks))
	}
}

func TestCheckPiUSB(t *testing.T) {
	p := mirror("backup", "sda", "sde", "sdd", "mmcblk0")
	p.Encryption = &Encryption{}
	in := inspect(t, "pi-usb", p, false)
	wantStatus(t, in.Checks, "usb", "sda", Warn, "USB bridge")
	wantStatus(t, in.Checks, "smart", "sda", Fail, "SMART overall health FAILED")
	wantStatus(t, in.Checks, "smart", "sdd", Warn, "Unknown USB bridge")
	wantStatus(t, in.Checks, "smart", "sdd", Warn, "smartctl -d sat -a")
	wantStatus(t, in.Checks, "smr", "sde", Warn, "WDC WD40EFAX-68J is Western Digital WD Red 4TB (EFAX)")
	wantStatus(t, in.Checks, "smr", "sde", Warn, "resilvers may take days or fail")
	wantStatus(t, in.Checks, "zfs-label", "sde", Fail, "pool vault (active: in use by this or another machine)")
	wantStatus(t, in.Checks, "mounted", "sdd", Fail, "sdd1 on /media/usb")
	// / is mounted from /dev/root: found by major:minor 179:2.
	wantStatus(t, in.Checks, "mounted", "mmcblk0", Fail, "mmcblk0p2 on /")
	wantStatus(t, in.Checks, "aes", "cpu", Warn, "about 10 MB/s")
	wantStatus(t, in.Checks, "swap", "mmcblk0", Pass, "") // /var/swap is a file
	if len(find(in.Checks, "smr", "sdc")) != 0 {
		t.Error("WD5000LPCX flagged as SMR")
	}
}

func TestCheckImportedPoolNeverWiped(t *testing.T) {
	h := loadHost(t, "pi-usb")
	h.cmds = append([]canned{{pattern: "zpool list -H -o name", stdout: []byte("tank\nvault\n")}}, h.cmds...)
	p := mirror("backup", "sde", "sdc")
	p.Validate()
	in, err := Inspect(context.Background(), h, p, InspectOptions{Wipe: true})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, in.Checks, "zfs-label", "sde", Fail, "belongs to the imported pool vault")
	for _, w := range in.Plan.Wipe {
		if strings.Contains(w.Device, "WD40EFAX") {
			t.Errorf("disk of an imported pool offered for wiping: %s", w.Device)
		}
	}
}

func TestCheckExportedPoolWipe(t *testing.T) {
	in := inspect(t, "pi-usb", mirror("backup", "sde", "sdc"), true)
	wantStatus(t, in.Checks, "zfs-label", "sde", Warn, "zpool labelclear")
	wantStatus(t, in.Checks, "signatures", "sde", Warn, "zfs_member 13548849399464694727 mainpool")
	if len(in.Plan.Wipe) != 2 || !in.Plan.Wipe[0].ZFSLabel || in.Plan.Wipe[1].ZFSLabel {
		t.Errorf("wipe targets: %+v", in.Plan.Wipe)
	}
}

func TestCheckHolders(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	// An LVM PV on sdq: /sys/block/sdq/holders/dm-0 (constructed).
	mk := func(p string) {
		full := h.root + "/sys/block/sdq/" + p
		if err := mkdirFile(full); err != nil {
			t.Fatal(err)
		}
	}
	mk("holders/dm-0")
	p := mirror("vault", "sdq", "sdc")
	p.Validate()
	in, err := Inspect(context.Background(), h, p, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, in.Checks, "holders", "sdq", Fail, "sdq → dm-0")
	wantStatus(t, in.Checks, "holders", "sdc", Pass, "")
}

func TestCheckAshift(t *testing.T) {
	p := mirror("vault", "sdc", "sdg")
	p.Ashift = 12
	in := inspect(t, "hdidle-nas", p, false)
	wantStatus(t, in.Checks, "ashift", "vault", Pass, "ashift=12 as planned")
	for phys, want := range map[int]int{0: 12, 512: 12, 4096: 12, 8192: 13, 16384: 14, 1 << 20: 16} {
		if got := AshiftFor(phys); got != want {
			t.Errorf("AshiftFor(%d) = %d, want %d", phys, got, want)
		}
	}
}

func TestCheckKeyFileExists(t *testing.T) {
	h := loadHost(t, "ssd-mirror")
	if err := mkdirFile(h.root + "/etc/zfs/keys/vault.key"); err != nil {
		t.Fatal(err)
	}
	p := mirror("vault", "sda", "sdb")
	p.Encryption = &Encryption{}
	p.Validate()
	in, err := Inspect(context.Background(), h, p, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, in.Checks, "key-file", "/etc/zfs/keys/vault.key", Fail, "never overwrites a key")
}

func TestCPUHasAES(t *testing.T) {
	for _, c := range []struct {
		in         string
		has, known bool
	}{
		{"flags\t\t: fpu vme aes avx\n", true, true},
		{"Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\n", true, true},                                               // Phytium FT-2000/4, hrw/arm-socs-table#23
		{"Features\t: fp asimd evtstrm crc32 cpuid\n", false, true},                                                                  // Raspberry Pi 4, agherzan/meta-raspberrypi#964
		{"Features        : half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm crc32\n", false, true}, // Pi 4 on a 32-bit OS, hrw/arm-socs-table#28
		{"processor : 0\n", false, false},
		{"flags : aesni\n", false, true},
	} {
		has, known := CPUHasAES([]byte(c.in))
		if has != c.has || known != c.known {
			t.Errorf("CPUHasAES(%q) = %v, %v", c.in, has, known)
		}
	}
}

func TestParseZdbLabel(t *testing.T) {
	b, err := readTestdata("hosts/pi-usb/out/zdb-sde1.txt")
	if err != nil {
		t.Fatal(err)
	}
	name, state := ParseZdbLabel(b)
	if name != "vault" || !strings.HasPrefix(state, "active") {
		t.Errorf("ParseZdbLabel = %q, %q", name, state)
	}
}

func TestParseBlkidExport(t *testing.T) {
	b, err := readTestdata("hosts/pi-usb/out/blkid-sde1.txt")
	if err != nil {
		t.Fatal(err)
	}
	kv := ParseBlkidExport(b)
	if kv["TYPE"] != "zfs_member" || kv["LABEL"] != "vault" || kv["PART_ENTRY_NUMBER"] != "1" {
		t.Errorf("ParseBlkidExport = %v", kv)
	}
}

func TestSpaceTraps(t *testing.T) {
	p := &Plan{Pool: "tank", Ashift: 12,
		Vdevs:      []VdevSpec{{Layout: LayoutRaidz2, Disks: []string{"a", "b", "c", "d", "e", "f"}}},
		Properties: map[string]string{"compression": "off"},
		Datasets: []DatasetSpec{
			{Name: "media", Properties: map[string]string{"recordsize": "1M"}},
			{Name: "vms", Properties: map[string]string{"recordsize": "8K", "compression": "lz4"}},
			{Name: "photos", Properties: map[string]string{"recordsize": "1M", "compression": "zstd-1"}},
		}}
	cs := SpaceTraps(p)
	wantStatus(t, cs, "space", "tank/media", Warn, "a 1.1 MiB file takes 2 records of 1M (55 % efficient)")
	wantStatus(t, cs, "space", "tank/vms", Warn, "each 8K block takes 2 data + 2 parity + 2 padding sectors, so 33 % of the space holds data, not the 67 %")
	wantStatus(t, cs, "space", "tank/vms", Warn, "recordsize=16K or larger")
	if len(find(cs, "space", "tank/photos")) != 0 || len(find(cs, "space", "tank")) != 0 {
		t.Errorf("false space warning: %+v", cs)
	}
	for _, c := range []struct {
		size              uint64
		w, p, d, par, pad int
	}{
		{128 << 10, 6, 2, 32, 16, 0},
		{16 << 10, 6, 2, 4, 2, 0},
		{4 << 10, 6, 2, 1, 2, 0},
		{16 << 10, 5, 1, 4, 1, 1},
		{128 << 10, 4, 1, 32, 11, 1},
	} {
		a := RaidzAllocation(c.size, c.w, c.p, 12)
		if a.Data != c.d || a.Parity != c.par || a.Padding != c.pad {
			t.Errorf("RaidzAllocation(%d, %d, %d) = %+v", c.size, c.w, c.p, a)
		}
	}
}

func TestLayoutSummary(t *testing.T) {
	tb := uint64(4000787030016)
	six := []uint64{tb, tb, tb, tb, tb, tb}
	cases := []struct {
		v    []VdevSpec
		s    []uint64
		want string
	}{
		{[]VdevSpec{{Layout: LayoutRaidz2, Disks: make([]string, 6)}}, six, "raidz2 of 6 × 4 TB: 16 TB usable, survives any 2 disk failures"},
		{[]VdevSpec{{Layout: LayoutMirror, Disks: make([]string, 2)}, {Layout: LayoutMirror, Disks: make([]string, 2)}}, six[:4], "2 × mirror of 2 × 4 TB: 8 TB usable, survives any 1 disk failure (up to 1 in each of the 2 vdevs)"},
		{[]VdevSpec{{Layout: LayoutMirror, Disks: make([]string, 3)}}, six[:3], "mirror of 3 × 4 TB: 4 TB usable, survives any 2 disk failures"},
	}
	for _, c := range cases {
		if got := LayoutSummary(c.v, c.s); got != c.want {
			t.Errorf("LayoutSummary = %q\nwant %q", got, c.want)
		}
	}
}

func TestCommandsShellQuoting(t *testing.T) {
	p := &Plan{Pool: "tank", Vdevs: []VdevSpec{{Layout: LayoutMirror, Disks: []string{"/dev/disk/by-id/usb-JMicron_Generic_0123456789ABCDEF-0:0", "/dev/disk/by-id/x"}}},
		Properties: map[string]string{"com.example:note": "it's $HOME `x`"},
		Datasets:   []DatasetSpec{{Name: "a b"}}}
	got := Steps(p)[0].String()
	want := `zpool create -o ashift=12 -O 'com.example:note=it'\''s $HOME ` + "`x`" + `' tank mirror /dev/disk/by-id/usb-JMicron_Generic_0123456789ABCDEF-0:0 /dev/disk/by-id/x`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if q := shellQuote("a b"); q != "'a b'" {
		t.Errorf("shellQuote = %s", q)
	}
	cmds := Commands(p)
	if cmds[0][len(cmds[0])-1] != "/dev/disk/by-id/x" || cmds[1][2] != "tank/a b" {
		t.Errorf("argv must not be quoted: %q", cmds)
	}
}
