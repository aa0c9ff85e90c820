package rules

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// The disks of the real capture machine (a.ls-l-dev-disk-by-id.txt): sdd
// is a vault member, sdf (a Samsung SSD) is in no pool.
var (
	vaultDisk = disk.Identity{Serial: "WD-WCC7K0000001", Kernel: "sdd", Model: "WDC WD40EFRX-68N32N0", Transport: disk.TransportSATA,
		ByID: "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001", ByIDAll: []string{"/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001"}}
	spareDisk = disk.Identity{Serial: "S3Z9NB0K000003", Kernel: "sdf", Model: "Samsung SSD 860 EVO 1TB", Transport: disk.TransportSATA,
		ByID: "/dev/disk/by-id/ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003", ByIDAll: []string{"/dev/disk/by-id/ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003"}}
)

func inventoryEnv(t testing.TB, at time.Time, ids ...disk.Identity) bus.Envelope {
	return envOf(t, facts.Disks.Name(), "disks", at, facts.DisksData{Disks: ids})
}

// tickUntil ticks the engine every 15 s for d and returns the notices.
func tickUntil(e *Engine, from time.Time, d time.Duration) []string {
	var out []string
	for s := time.Duration(0); s <= d; s += 15 * time.Second {
		out = append(out, noteLines(e.Tick(from.Add(s)))...)
	}
	return out
}

// A disk outside any pool that leaves is DiskVanished; a pool member that
// leaves is not (its pool's rules speak for it); it resolves when back.
func TestDiskVanishedOutsideAPool(t *testing.T) {
	e := newTestEngine()
	observe(t, e, statusEnv(t, cap232+"a.zpool-status-p-P.txt", t0), t0)
	observe(t, e, inventoryEnv(t, t0, vaultDisk, spareDisk), t0)
	now := t0.Add(time.Minute)
	observe(t, e, inventoryEnv(t, now), now)
	tickUntil(e, now, 3*time.Minute)
	sameList(t, active(e, nameDiskVanished), []string{"DiskVanished warning disk=S3Z9NB0K000003"})
	a := find(e, nameDiskVanished)
	if a == nil || !strings.Contains(a.Summary, "S3Z9NB0K000003 (sdf, Samsung SSD 860 EVO 1TB)") || !strings.Contains(a.Description, "zwatch forget-disk S3Z9NB0K000003") {
		t.Fatalf("alert = %+v", a)
	}
	// Back under another kernel name: the same disk, resolved.
	back := spareDisk
	back.Kernel = "sdg"
	now = now.Add(5 * time.Minute)
	observe(t, e, inventoryEnv(t, now, vaultDisk, back), now)
	sameList(t, active(e, nameDiskVanished), nil)
}

// A USB reset that re-enumerates the disk within seconds pages nothing.
func TestDiskVanishedWaitsOutAReEnumeration(t *testing.T) {
	e := newTestEngine()
	observe(t, e, inventoryEnv(t, t0, spareDisk), t0)
	observe(t, e, inventoryEnv(t, t0.Add(time.Minute)), t0.Add(time.Minute))
	observe(t, e, inventoryEnv(t, t0.Add(70*time.Second), spareDisk), t0.Add(70*time.Second))
	if lines := tickUntil(e, t0.Add(70*time.Second), 10*time.Minute); len(lines) > 0 {
		t.Errorf("notices: %v", lines)
	}
}

// forget-disk and rules.disks.ignore end it; a restart does not.
func TestDiskVanishedForgetIgnoreRestart(t *testing.T) {
	ctx := context.Background()
	kv, err := openTestBus(ctx, t).JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	old := newTestEngine()
	observe(t, old, inventoryEnv(t, t0, spareDisk), t0)
	now := t0.Add(time.Minute)
	observe(t, old, inventoryEnv(t, now), now)
	tickUntil(old, now, 3*time.Minute)
	if find(old, nameDiskVanished) == nil {
		t.Fatal("not firing before the restart")
	}
	if err := old.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}
	e := newTestEngine()
	if err := e.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	now = now.Add(5 * time.Minute)
	observe(t, e, statusEnv(t, cap232+"a.zpool-status-p-P.txt", now), now)
	for _, l := range tickUntil(e, now, time.Minute) {
		if strings.HasPrefix(l, "resolved") {
			t.Errorf("after the restart: %s", l)
		}
	}
	if find(e, nameDiskVanished) == nil {
		t.Fatal("DiskVanished ended with the restart")
	}
	// By its by-id name, as a person may paste it.
	observe(t, e, envOf(t, facts.DiskForget.Name(), "", now, facts.DiskForgetData{Serial: "ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003", By: "root"}), now)
	if find(e, nameDiskVanished) != nil {
		t.Error("still firing after forget-disk")
	}

	// A USB stick (the kernel's removable flag) comes and goes by design.
	stick := disk.Identity{Serial: "4C530001230811110584", Kernel: "sdh", Transport: disk.TransportUSB, Removable: true}
	st := newTestEngine()
	observe(t, st, inventoryEnv(t, t0, stick), t0)
	observe(t, st, inventoryEnv(t, t0.Add(time.Minute)), t0.Add(time.Minute))
	tickUntil(st, t0.Add(time.Minute), 5*time.Minute)
	sameList(t, active(st, nameDiskVanished), nil)

	ig := newTestEngine(func(c *config.RulesConfig) {
		disksConfig.edit(c, func(d *diskSettings) { d.Ignore = []string{"ata-Samsung_SSD_*"} })
	})
	observe(t, ig, inventoryEnv(t, t0, spareDisk), t0)
	observe(t, ig, inventoryEnv(t, t0.Add(time.Minute)), t0.Add(time.Minute))
	tickUntil(ig, t0.Add(time.Minute), 5*time.Minute)
	sameList(t, active(ig, nameDiskVanished), nil)
}

// The memory of disks is bounded: the longest gone are dropped first.
func TestSeenDisksBounded(t *testing.T) {
	e := newTestEngine()
	h := e.host(testHost)
	for i := range maxSeenDisks + 10 {
		id := disk.Identity{Serial: "S" + string(rune('A'+i/26)) + string(rune('a'+i%26))}
		e.noteInventory(h, []disk.Identity{id}, t0.Add(time.Duration(i)*time.Minute))
	}
	seen := seenDisksMemory.peek(h).disks()
	if n := len(seen); n != maxSeenDisks {
		t.Errorf("remembered %d disks, want %d", n, maxSeenDisks)
	}
	if seen["SAa"] != nil {
		t.Error("the disk gone longest is still remembered")
	}
}

// The real mismatches of public bug reports fire; matching versions (the
// QEMU captures) and packaging revisions alone do not.
func TestZFSVersionMismatch(t *testing.T) {
	cases := []struct {
		file    string
		summary string
	}{
		{"zfs-version/openzfs-16716-nixos.txt", "ZFS userland 2.2.6 but kernel module 2.2.4 is loaded"},
		{"zfs-version/openzfs-13248-arch.txt", "ZFS userland 2.1.4 but kernel module 2.1.3 is loaded"},
		{"captured/zfs-2.3.2/a.version.txt", ""},
		{"captured/zfs-2.1.11/a.version.txt", ""},
	}
	for _, c := range cases {
		v := parseTestdata(t, c.file, zfs.ParseVersionText)
		e := newTestEngine()
		observe(t, e, envOf(t, facts.ZFSVersion.Name(), "zfs_version", t0, facts.ZFSVersionData{Userland: v.Userland, Kernel: v.Kernel, Source: "zfs version"}), t0)
		a := find(e, nameZFSVersionMismatch)
		switch {
		case c.summary == "" && a != nil:
			t.Errorf("%s: %s", c.file, a.Summary)
		case c.summary != "" && (a == nil || a.Summary != c.summary || !strings.Contains(a.Description, "modprobe -r zfs && modprobe zfs") || !strings.Contains(a.Description, "old kernel module is still loaded")):
			t.Errorf("%s: alert %+v", c.file, a)
		}
	}
	// Only the packaging revision differs: not an upgrade waiting for a
	// reboot. (Derived: the module line of openzfs/zfs#18559 with the
	// userland given a later revision of the same release.)
	e := newTestEngine()
	observe(t, e, envOf(t, facts.ZFSVersion.Name(), "zfs_version", t0, facts.ZFSVersionData{Userland: "zfs-2.2.2-0ubuntu9.1", Kernel: "zfs-kmod-2.2.2-0ubuntu9"}), t0)
	if a := find(e, nameZFSVersionMismatch); a != nil {
		t.Errorf("revision only: %s", a.Summary)
	}
}

// A disk replaced out of its pool and pulled days later is the end of the
// replacement; one that left its pool long before is a shelf disk again.
func TestDiskVanishedAfterAReplacement(t *testing.T) {
	for _, c := range []struct {
		pulledAfter time.Duration
		want        []string
	}{
		{2 * 24 * time.Hour, nil},
		{8 * 24 * time.Hour, []string{"DiskVanished warning disk=WD-WCC7K0000001"}},
	} {
		e := newTestEngine()
		observe(t, e, statusEnv(t, cap232+"a.zpool-status-p-P.txt", t0), t0)
		observe(t, e, inventoryEnv(t, t0, vaultDisk), t0)
		// Replaced: no pool lists it any more (a status with no pools stands
		// in for vault's after the detach), the disk still attached.
		now := t0.Add(time.Hour)
		observe(t, e, poolsEnv(t, nil, now), now)
		observe(t, e, inventoryEnv(t, now.Add(time.Minute), vaultDisk), now.Add(time.Minute))
		now = now.Add(c.pulledAfter)
		observe(t, e, inventoryEnv(t, now), now)
		tickUntil(e, now, 3*time.Minute)
		sameList(t, active(e, nameDiskVanished), c.want)
	}
}
