package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/disk"
)

// The e2e readerr sequence on the real l4 captures: the kernel's records
// page first, ZFS faults the disk 5 s later (one incident), and VdevErrors,
// whose `for` is 30 s here, joins the incident after it paged. A part
// joining pages nothing; the kernel's count passing the next power of ten
// does.
func TestIncidentPagesOnceWhilePartsJoin(t *testing.T) {
	e := newTestEngine(func(c *config.RulesConfig) {
		c.For = map[string]config.Duration{nameVdevErrors: config.Duration(30 * time.Second)}
	})
	observe(t, e, statusEnv(t, "captured/zfs-2.3.2/l4-before.zpool-status.txt", t0), t0)
	e.Tick(t0.Add(time.Second))
	id := &disk.Identity{Serial: "ZWBD0001", WWN: "0x5000c500a0000105", Kernel: "sda", Transport: disk.TransportSCSI}
	at := t0.Add(30 * time.Second)
	observe(t, e, kernelEnv(t, at, facts.KernelDiskLog{Ref: "sda", Disk: id, First: at, Last: at,
		Counts: map[string]int{"io_error": 1, "command_failed": 1}}), at)
	var pages []string
	collect := func(from time.Time, secs int) {
		for i := 0; i <= secs; i++ {
			for _, l := range noteLines(e.Tick(from.Add(time.Duration(i) * time.Second))) {
				if strings.HasPrefix(l, "firing") {
					pages = append(pages, l)
				}
			}
		}
	}
	collect(at, 2)
	at2 := at.Add(5 * time.Second)
	observe(t, e, statusEnv(t, "captured/zfs-2.3.2/l4-read-errors.zpool-status.txt", at2), at2)
	collect(at2, 120)
	incidents := 0
	for _, p := range pages {
		if strings.Contains(p, nameDiskIncident) {
			incidents++
		}
	}
	if incidents != 1 {
		t.Fatalf("DiskIncident paged %d times in the 2 min after the fault, want once:\n%s", incidents, strings.Join(pages, "\n"))
	}
	// make e2e readerr: the scrub's retries log on; 11 lines are 5 failed
	// reads, no news.
	atMore := at2.Add(time.Minute)
	observe(t, e, kernelEnv(t, atMore, facts.KernelDiskLog{Ref: "sda", Disk: id, First: atMore, Last: atMore,
		Counts: map[string]int{"io_error": 4, "buffer_io_error": 1, "command_failed": 4}}), atMore)
	pages = nil
	collect(atMore, 30)
	if len(pages) != 0 {
		t.Fatalf("5 I/O errors, 1 buffer I/O error and 5 failed commands paged again:\n%s", strings.Join(pages, "\n"))
	}
	at3 := at2.Add(3 * time.Minute)
	observe(t, e, kernelEnv(t, at3, facts.KernelDiskLog{Ref: "sda", Disk: id, First: at3, Last: at3,
		Counts: map[string]int{"io_error": 6, "command_failed": 6}}), at3)
	pages = nil
	collect(at3, 30)
	if len(pages) != 0 {
		t.Fatalf("the count passed 10 3 min after the page, within group_interval (5 min), and paged at once:\n%s", strings.Join(pages, "\n"))
	}
	// make e2e readerr in a slow guest: 3 then 11 failed commands within a
	// minute paged twice. The count is news, told once group_interval
	// after the page.
	collect(at3.Add(31*time.Second), 120)
	if len(pages) != 1 || !strings.Contains(pages[0], nameDiskIncident) || !strings.Contains(pages[0], "11 I/O errors") {
		t.Fatalf("after the kernel's count passed 10, want one incident page with the new count once group_interval passed, got:\n%s", strings.Join(pages, "\n"))
	}
}

// SMART read at once after the incident paged (the urgent read a kernel
// or ZFS error asks for) joins it without a second page: its 8 pending
// sectors are in the incident's next notice, not a page of their own.
func TestSmartJoiningAnIncidentDoesNotPageAgain(t *testing.T) {
	pools := statusPools(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt")
	l := leafNamed(pools, "gpt/usb1")
	l.Name, l.Path = "ata-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-part1", "/dev/disk/by-id/ata-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-part1"
	l.ChecksumErrors = 3
	r := smartReport(t, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	r.SmartPassed = nil
	setRaw(r, 5, 0)
	id := &disk.Identity{Serial: "MSK423Y20S3HBC", Kernel: "sdc", Transport: disk.TransportUSB}

	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameVdevErrors) })
	observe(t, e, kernelEnv(t, t0, facts.KernelDiskLog{Ref: "sdc", Disk: id, First: t0, Last: t0,
		Counts: map[string]int{"io_error": 2}}), t0)
	observe(t, e, poolsEnv(t, pools, t0.Add(time.Second)), t0.Add(time.Second))
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, noteLines(e.Tick(t0.Add(time.Duration(i)*time.Second)))...)
	}
	at := t0.Add(31 * time.Second)
	observe(t, e, smartEnv(t, r, at), at)
	for i := 0; i <= 60; i++ {
		lines = append(lines, noteLines(e.Tick(at.Add(time.Duration(i)*time.Second)))...)
	}
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "firing") && strings.Contains(l, nameDiskIncident) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("DiskIncident paged %d times, want once:\n%s", n, strings.Join(lines, "\n"))
	}
}

// The kernel's warning about a disk paged a moment ago does not hold back
// ZFS faulting that disk: the first critical page of the group goes at
// once, not group_wait later (make e2e readerr: 15.4 s before this).
func TestCriticalAfterWarningDoesNotWaitGroupWait(t *testing.T) {
	e := newTestEngine()
	observe(t, e, statusEnv(t, "captured/zfs-2.3.2/l4-before.zpool-status.txt", t0), t0)
	e.Tick(t0.Add(time.Second))
	id := &disk.Identity{Serial: "ZWBD0001", WWN: "0x5000c500a0000105", Kernel: "sda", Transport: disk.TransportSCSI}
	at := t0.Add(30 * time.Second)
	observe(t, e, kernelEnv(t, at, facts.KernelDiskLog{Ref: "sda", Disk: id, First: at, Last: at,
		Counts: map[string]int{"io_error": 1}}), at)
	if got := noteLines(e.Tick(at.Add(500 * time.Millisecond))); len(got) == 0 || !strings.Contains(got[0], "warning "+nameKernelDiskErrors) {
		t.Fatalf("kernel page: %v", got)
	}
	at2 := at.Add(3 * time.Second)
	observe(t, e, statusEnv(t, "captured/zfs-2.3.2/l4-read-errors.zpool-status.txt", at2), at2)
	got := noteLines(e.Tick(at2.Add(time.Second)))
	if len(got) == 0 || !strings.Contains(got[0], "critical "+nameDiskIncident) {
		t.Fatalf("1 s after ZFS faulted the disk the kernel warned about, want the critical incident paged, got %v", got)
	}
}
