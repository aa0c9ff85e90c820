package replace

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

func TestCandidates(t *testing.T) {
	pools := loadPools(t, "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt")
	pool := pools[0]
	old := leafByName(t, pool, "6544112441320430488")

	mk := func(kernel, model, serial string, size uint64, logical int) disk.Identity {
		id := "ata-" + strings.ReplaceAll(model, " ", "_") + "_" + serial
		return disk.Identity{Kernel: kernel, Model: model, Serial: serial, SizeBytes: size,
			ByID: "/dev/disk/by-id/" + id, ByIDAll: []string{"/dev/disk/by-id/" + id},
			LogicalSector: logical, PhysicalSector: 4096}
	}
	const tb3 = 3000592982016
	probe := fakeProbe{
		"sdm": {u: Usage{Type: "disk", Mounts: []string{"/mnt/backup"}, Partitions: []string{"sdm1"},
			Signatures: []Signature{{Device: "sdm1", Type: "ext4"}}}},
		"sdz": {u: Usage{Type: "disk", Partitions: []string{"sdz1", "sdz9"},
			Signatures: []Signature{{Device: "sdz1", Type: "zfs_member"}}}},
		"sdg": {u: Usage{Type: "disk", Signatures: []Signature{{Device: "/dev/sdg", Type: "linux_raid_member"}}}},
		"sdh": {u: Usage{Type: "disk", Holders: []string{"md0 (raid1)"}}},
		"sde": {err: errors.New("lsblk: permission denied")},
		"sdp": {u: Usage{Type: "part"}},
	}
	// The failing disk came back on another port: it is the old one.
	oldBack := tresorOld
	oldBack.Kernel = "sdk"

	cases := []struct {
		name    string
		disk    disk.Identity
		ashift  int
		usable  bool
		reasons []string // codes, in order
		smr     bool
		warn    []string
	}{
		{name: "new empty larger disk", disk: tresorNew, usable: true},
		{name: "exactly the vdev's size", disk: mk("sdq", "WDC WD30EFRX-68EUZN0", "WD-WCC4N0000001", tb3, 512), usable: true},
		{name: "too small", disk: mk("sds", "WDC WD20EFRX-68EUZN0", "WD-WCC4M0000002", 2000398934016, 512), reasons: []string{CodeTooSmall}},
		{name: "a few MB short of nominal size", disk: mk("sdt", "ST3000VN007-2E4166", "Z7310001", tb3-8*1024*1024, 512), reasons: []string{CodeTooSmall}},
		{name: "size unknown", disk: mk("sdu", "Mystery", "M0000001", 0, 512), reasons: []string{CodeSizeUnknown}},
		{name: "in the pool", disk: tresorSurvivor, reasons: []string{CodeInPool}},
		{name: "same as old", disk: oldBack, reasons: []string{CodeSameAsOld}},
		{name: "mounted with partitions", disk: mk("sdm", "ST4000VN008-2DR166", "ZDH10001", 4000787030016, 512),
			reasons: []string{CodeMounted, CodePartitioned, CodeSignature}},
		{name: "old zfs label", disk: mk("sdz", "ST4000VN008-2DR166", "ZDH10002", 4000787030016, 512),
			reasons: []string{CodePartitioned, CodeSignature}},
		{name: "md member signature", disk: mk("sdg", "ST4000VN008-2DR166", "ZDH10003", 4000787030016, 512), reasons: []string{CodeSignature}},
		{name: "held by md", disk: mk("sdh", "ST4000VN008-2DR166", "ZDH10004", 4000787030016, 512), reasons: []string{CodeHeld}},
		{name: "probe failed", disk: mk("sde", "ST4000VN008-2DR166", "ZDH10005", 4000787030016, 512), reasons: []string{CodeProbeFailed}},
		{name: "not a whole disk", disk: mk("sdp", "ST4000VN008-2DR166", "ZDH10006", 4000787030016, 512), reasons: []string{CodeNotWhole}},
		{name: "4Kn into ashift=9", disk: mk("sdn", "HUH721010AL4200", "7PG00001", 10000831348736, 4096), ashift: 9, reasons: []string{CodeSector}},
		{name: "4Kn into ashift=12", disk: mk("sdn", "HUH721010AL4200", "7PG00001", 10000831348736, 4096), ashift: 12, usable: true},
		{name: "512e into ashift=9", disk: mk("sdo", "ST4000VN008-2DR166", "ZDH10007", 4000787030016, 512), ashift: 9, usable: true},
		{name: "4Kn, ashift unknown, 512 members", disk: mk("sdn", "HUH721010AL4200", "7PG00001", 10000831348736, 4096),
			usable: true, warn: []string{CodeAshiftUnsure}},
		{name: "SMR flagged but usable", disk: mk("sdr", "WDC WD40EFAX-68JH4N1", "WD-WX12D0000001", 4000787030016, 512),
			usable: true, smr: true, warn: []string{CodeSMR}},
		{name: "SMR Seagate", disk: mk("sdr", "ST8000DM004-2CX188", "ZCT00001", 8001563222016, 512), usable: true, smr: true, warn: []string{CodeSMR}},
		{name: "SMR Toshiba", disk: mk("sdr", "TOSHIBA DT02ABA400", "X0000001", 4000787030016, 512), usable: true, smr: true, warn: []string{CodeSMR}},
		{name: "several problems at once", disk: mk("sdz", "WDC WD20EFAX-68FB5N0", "WD-WX00000003", 2000398934016, 512),
			reasons: []string{CodeTooSmall, CodePartitioned, CodeSignature}, smr: true, warn: []string{CodeSMR}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			disks := []disk.Identity{tresorSurvivor, c.disk}
			tgt := TargetFor(pool, old, disks)
			tgt.Old = &tresorOld // known from an earlier discovery
			tgt.Ashift = c.ashift
			got := Candidates(context.Background(), disks, pools, tgt, probe)
			var cand *Candidate
			for i := range got {
				if got[i].Disk.Kernel == c.disk.Kernel {
					cand = &got[i]
				}
			}
			if cand == nil {
				t.Fatal("disk missing from candidates")
			}
			if cand.Usable != c.usable || !slices.Equal(codes(cand.Reasons), c.reasons) {
				t.Errorf("usable %v reasons %v, want %v %v (%+v)", cand.Usable, codes(cand.Reasons), c.usable, c.reasons, cand.Reasons)
			}
			if cand.SMR != c.smr || !slices.Equal(codes(cand.Warnings), c.warn) {
				t.Errorf("smr %v warnings %v, want %v %v", cand.SMR, codes(cand.Warnings), c.smr, c.warn)
			}
			for _, r := range cand.Reasons {
				if r.Text == "" || r.Fix == "" {
					t.Errorf("reason without text or fix: %+v", r)
				}
			}
		})
	}
}

func codes(rs []Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

func TestTargetForUsesSmallestMember(t *testing.T) {
	p := loadPool(t, "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt")
	tgt := TargetFor(p, leafByName(t, p, "6544112441320430488"), []disk.Identity{tresorSurvivor, tresorNew})
	if tgt.Pool != "tresor1" || tgt.TopVdev != "mirror-0" || tgt.MinSize != tresorSurvivor.SizeBytes || tgt.Old != nil {
		t.Errorf("target %+v", tgt)
	}
	if tgt.MemberLogicalSector != 512 {
		t.Errorf("member logical sector %d", tgt.MemberLogicalSector)
	}
}

// A kernel name in a "was" note belongs to whatever disk holds it now; a
// new disk that inherited it must not count as in the pool.
func TestCandidatesKernelNameOfGoneDiskIsNotMembership(t *testing.T) {
	pools := loadPools(t, "freebsd-handbook-mirror-degraded-guid-unavail-2Q.txt")
	heir := disk.Identity{Kernel: "ada1", Serial: "NEW00001", Model: "WDC WD10EFRX-68FYTN0", SizeBytes: 1000204886016, LogicalSector: 512}
	got := Candidates(context.Background(), []disk.Identity{heir}, pools, Target{Pool: "mypool"}, fakeProbe{})
	if !got[0].Usable {
		t.Errorf("heir of a gone disk's kernel name refused: %+v", got[0].Reasons)
	}
	// A present member named by kernel name is in the pool.
	member := disk.Identity{Kernel: "ada0", Serial: "OLD00001", SizeBytes: 1000204886016}
	got = Candidates(context.Background(), []disk.Identity{member}, pools, Target{Pool: "mypool"}, fakeProbe{})
	if got[0].Usable || got[0].Reasons[0].Code != CodeInPool {
		t.Errorf("present member not found in pool: %+v", got[0])
	}
}

// Every pool counts, and every class: a cache or log device is taken too.
func TestCandidatesChecksEveryPoolAndClass(t *testing.T) {
	pools := loadPools(t, "zol-0.6-mirror-resilver-in-progress-logs-cache-tabs.txt")
	pools = append(pools, loadPools(t, "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt")...)
	cache := disk.Identity{Kernel: "sda", Serial: "CACHE001", SizeBytes: 256060514304}
	data := disk.Identity{Kernel: "sdd", Serial: "DATA0001", SizeBytes: 4000787030016}
	got := Candidates(context.Background(), []disk.Identity{cache, data, tresorSurvivor}, pools, Target{Pool: "tresor1"}, fakeProbe{})
	for _, c := range got {
		if c.Usable {
			t.Errorf("%s usable, but it is in a pool", c.Disk.Kernel)
		}
	}
}

func TestCandidatesNilProbeRefuses(t *testing.T) {
	got := Candidates(context.Background(), []disk.Identity{tresorNew}, nil, Target{}, nil)
	if got[0].Usable {
		t.Error("an unprobed disk was usable")
	}
}

func TestCandidatesUsableFirst(t *testing.T) {
	pools := loadPools(t, "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt")
	got := Candidates(context.Background(), []disk.Identity{tresorSurvivor, tresorBoot, tresorNew}, pools,
		Target{Pool: "tresor1", MinSize: tresorSurvivor.SizeBytes}, bootProbe)
	if !got[0].Usable || got[0].Disk.Kernel != "sdb" || got[1].Usable || got[2].Usable {
		t.Errorf("order: %v %v %v", got[0].Disk.Kernel, got[1].Disk.Kernel, got[2].Disk.Kernel)
	}
}

func TestWipeFixNamesTheLabelPartition(t *testing.T) {
	d := disk.Identity{Kernel: "sdz", ByID: "/dev/disk/by-id/ata-X_Y"}
	fix := wipeFix(d, Usage{Signatures: []Signature{{Device: "sdz1", Type: "zfs_member"}}})
	if !strings.Contains(fix, "zpool labelclear -f /dev/disk/by-id/ata-X_Y-part1") || !strings.Contains(fix, "destroys the ZFS label") {
		t.Errorf("fix: %s", fix)
	}
}

func TestSMRModel(t *testing.T) {
	for model, want := range map[string]bool{
		"WDC WD40EFAX-68JH4N1": true, "WDC  WD60EFAX-68SHWN0": true, "WDC WD40EFRX-68N32N0": false,
		"WDC WD40EFZX-68AWUN0": false, "ST8000DM004-2CX188": true, "ST2000DM008-2FR102": true,
		"ST4000VN008-2DR166": false, "TOSHIBA HDWD240": true, "TOSHIBA HDWD120": false, "": false,
	} {
		if _, got := SMRModel(model); got != want {
			t.Errorf("SMRModel(%q) = %v, want %v", model, got, want)
		}
	}
}

// The vdev tree is only read: Candidates never changes the pools.
func TestCandidatesLeavesPoolsAlone(t *testing.T) {
	pools := loadPools(t, "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt")
	before := leafNames(pools[0])
	Candidates(context.Background(), []disk.Identity{tresorNew, tresorSurvivor}, pools, Target{}, fakeProbe{})
	if after := leafNames(pools[0]); !slices.Equal(before, after) {
		t.Errorf("pools changed: %v -> %v", before, after)
	}
}

func leafNames(p *zfs.Pool) []string {
	var out []string
	for _, cv := range p.AllVdevs() {
		for _, l := range cv.Vdev.Leaves() {
			out = append(out, l.Name+"|"+l.Path+"|"+l.State)
		}
	}
	return out
}
