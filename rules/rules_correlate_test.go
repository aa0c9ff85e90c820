package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// No testdata pairs a zpool status and a SMART report of the same disk, so
// the real failing Hitachi (serial MSK423Y20S3HBC) is put, by hand, behind
// a vdev of the real upool output under a by-id name that carries its serial.
func TestDiskIncident(t *testing.T) {
	pools := statusPools(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt")
	l := leafNamed(pools, "gpt/usb1")
	l.Name, l.Path = "ata-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-part1", "/dev/disk/by-id/ata-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-part1"
	l.ChecksumErrors = 3
	r := smartReport(t, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	r.SmartPassed = nil // keep the example to the counters
	setRaw(r, 5, 0)

	e := newTestEngine()
	observe(t, e, smartEnv(t, r, t0), t0)
	observe(t, e, poolsEnv(t, pools, t0.Add(time.Second)), t0.Add(time.Second))
	ns := e.Tick(t0.Add(20 * time.Second))
	sameList(t, noteLines(ns), []string{
		"firing warning DiskIncident: MSK423Y20S3HBC in upool/raidz1-0: 3 checksum errors and 8 pending sectors",
		"--",
	})
	a := ns[0].Alerts[0]
	if a.Replacement == nil || a.Replacement.Disk == nil || a.Replacement.Disk.Serial != "MSK423Y20S3HBC" || a.Replacement.TopVdev != "raidz1-0" {
		t.Errorf("replacement %+v", a.Replacement)
	}
	if !strings.Contains(a.Description, "pending sectors") || !strings.Contains(a.Description, "checksum") {
		t.Errorf("description %q", a.Description)
	}
}

// SMART trouble on a disk of a vdev that is resilvering: the real
// resilvering upool, with the failing Hitachi put behind gpt/usb1 by hand.
func TestResilverAtRisk(t *testing.T) {
	pools := statusPools(t, "zpool-status/freebsd-raidz1-replacing-guid-was-dev-resilvering.txt")
	l := leafNamed(pools, "gpt/usb1")
	l.Name, l.Path = "/dev/sdc", "/dev/sdc" // kernel-name join
	r := smartReport(t, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	e := newTestEngine()
	observe(t, e, poolsEnv(t, pools, t0), t0)
	observe(t, e, smartEnv(t, r, t0), t0)
	a := find(e, nameResilverAtRisk)
	if a == nil || a.Severity != alert.Critical || a.Labels["vdev"] != "raidz1-0" {
		t.Fatalf("%+v", a)
	}
	t.Log(a.Summary)
}

func TestJoin(t *testing.T) {
	id := func(serial, wwn string) (s, w string) { return serial, wwn }
	cases := []struct {
		path, serial, wwn, device string
		want                      bool
	}{
		{"/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WX32D7088AF1-part1", "WD-WX32D7088AF1", "", "/dev/sdc", true},
		{"ata-WDC_WD40EFRX-68N32N0_WD-WX32D7088AF1", "WD-WX32D7088AF1", "", "", true},
		{"ata-WDC_WD40EFRX-68N32N0_XWD-WX32D7088AF1", "WD-WX32D7088AF1", "", "", false}, // a longer serial
		{"nvme-Samsung_SSD_970_EVO_500GB_S466NX0M776250H_1", "S466NX0M776250H", "", "", true},
		{"usb-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-0:0-part2", "MSK423Y20S3HBC", "", "", true},
		{"/dev/disk/by-id/wwn-0x5000cca26bd9f3a8-part1", "X", "0x5000cca26bd9f3a8", "", true},
		{"/dev/disk/by-id/wwn-0x5000cca26bd9f3a9", "X", "0x5000cca26bd9f3a8", "", false},
		{"/dev/sdc1", "X", "", "/dev/sdc", true},
		{"sdc", "X", "", "/dev/sdc", true},
		{"/dev/sdc1", "X", "", "/dev/sdd", false},
		{"nvme0n1p3", "X", "", "/dev/nvme0n1", true},
		{"ada2p1", "X", "", "/dev/ada2", true},
		{"gpt/usb2", "X", "", "/dev/da2", false},
	}
	for _, tc := range cases {
		s, w := id(tc.serial, tc.wwn)
		if got := matchesDisk(tc.path, identityFor(s, w), tc.device); got != tc.want {
			t.Errorf("%s vs serial %s wwn %s dev %s: %v", tc.path, tc.serial, tc.wwn, tc.device, got)
		}
	}
}

// Inhibition: the real UNAVAIL pool (dozer) carries its FAULTED disk; the
// disk's alerts exist but are not sent on their own.
func TestInhibitionByDeadPool(t *testing.T) {
	e := newTestEngine()
	observe(t, e, statusEnv(t, "zpool-status/zol-0.7rc-pool-unavail-insufficient-replicas-suspended-errlog.txt", t0), t0)
	ns := e.Tick(t0.Add(time.Minute))
	var got []string
	for _, a := range ns[0].Alerts {
		got = append(got, a.Name)
	}
	sameList(t, got, []string{"PoolState"}) // VdevState, VdevErrors (6 reads), RedundancyMargin: inhibited
	if !strings.Contains(ns[0].Alerts[0].Summary, "sdd FAULTED") {
		t.Errorf("pool alert should carry its disks: %q", ns[0].Alerts[0].Summary)
	}
}
