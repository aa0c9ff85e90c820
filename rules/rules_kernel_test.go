package rules

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/kernlog"
)

// The kernel.log payloads here are built by hand: they are what the
// follower folds records into (counts by kind), not kernel lines. The
// serial and by-id name are the real failing Hitachi of testdata/smartctl.
const kernSerial = "MSK423Y20S3HBC"

func hitachi() *disk.Identity {
	return &disk.Identity{Serial: kernSerial, Kernel: "sdc", Transport: disk.TransportUSB,
		ByID: "/dev/disk/by-id/usb-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-0:0"}
}

func kernelEnv(t testing.TB, at time.Time, entries ...facts.KernelDiskLog) bus.Envelope {
	return envOf(t, facts.KernelLog.Name(), "kernel_log", at, facts.KernelLogData{Source: "kmsg", Disks: entries})
}

func kernelEntry(id *disk.Identity, ref string, first, last time.Time, counts map[string]int) facts.KernelDiskLog {
	return facts.KernelDiskLog{Ref: ref, Disk: id, Counts: counts, First: first, Last: last}
}

func TestLinkResetsBursts(t *testing.T) {
	e := newTestEngine()
	id := hitachi()
	// One burst of 14 resets over 10 minutes (never a minute apart): a warning at once.
	observe(t, e, kernelEnv(t, t0.Add(10*time.Minute), kernelEntry(id, "usb 2-1", t0, t0.Add(10*time.Minute), map[string]int{"link_reset": 14})), t0.Add(10*time.Minute))
	ns := e.Tick(t0.Add(10*time.Minute + time.Second))
	sameList(t, noteLines(ns), []string{"firing warning LinkResets: sdc (MSK423Y20S3HBC): 14 link resets in 10 min", "--"})
	a := ns[0].Alerts[0]
	if !strings.Contains(a.Description, "USB enclosure") || a.Labels["disk"] != kernSerial || a.Evidence["bursts"] != "1" {
		t.Errorf("description %q labels %v evidence %v", a.Description, a.Labels, a.Evidence)
	}
	// A second burst 5 minutes later: more resets, same power of ten, no page.
	at := t0.Add(15 * time.Minute)
	observe(t, e, kernelEnv(t, at, kernelEntry(id, "usb 2-1", at, at, map[string]int{"link_reset": 2})), at)
	if ns := e.Tick(at.Add(time.Minute)); len(ns) != 0 {
		t.Errorf("second burst paged again: %v", noteLines(ns))
	}
	// The third burst within the hour: critical, paged as an escalation.
	at = t0.Add(30 * time.Minute)
	observe(t, e, kernelEnv(t, at, kernelEntry(id, "usb 2-1", at, at.Add(time.Second), map[string]int{"link_reset": 1, "link_error": 3})), at)
	ns = e.Tick(at.Add(time.Minute))
	sameList(t, noteLines(ns), []string{"firing critical LinkResets: sdc (MSK423Y20S3HBC): 17 link resets and 3 link errors in 30 min", "--"})
	// The window passes: back to warning, which is not news.
	at = t0.Add(2 * time.Hour)
	if ns := e.Tick(at); len(ns) != 0 {
		t.Errorf("de-escalation paged: %v", noteLines(ns))
	}
	sameList(t, active(e), []string{"LinkResets warning disk=" + kernSerial})
	if a := find(e, nameLinkResets); !strings.Contains(a.Description, "bursts that ended more than 1h ago") || a.Evidence["bursts"] != "0" {
		t.Errorf("after the window: %q %v", a.Description, a.Evidence)
	}
	// A day of silence: resolved, and the history is gone.
	at = t0.Add(30*time.Minute + 24*time.Hour + time.Minute)
	ns = e.Tick(at)
	sameList(t, noteLines(ns), []string{"resolved warning LinkResets: sdc (MSK423Y20S3HBC): 17 link resets and 3 link errors in 30 min", "--"})
	if len(kernelMemory.peek(e.hosts[testHost]).disks()) != 0 {
		t.Errorf("history kept: %+v", kernelMemory.peek(e.hosts[testHost]).disks())
	}
}

// Media and link kinds are separate alerts; gone is DiskVanished's.
func TestKernelCauses(t *testing.T) {
	e := newTestEngine()
	observe(t, e, kernelEnv(t, t0,
		kernelEntry(hitachi(), "sdc", t0, t0, map[string]int{"io_error": 12, "medium_error": 2, "link_reset": 1}),
		kernelEntry(nil, "usb 1-1", t0, t0, map[string]int{"gone": 1}),
	), t0)
	sameList(t, active(e), []string{"KernelDiskErrors warning disk=" + kernSerial, "LinkResets warning disk=" + kernSerial})
	a := find(e, nameKernelDiskErrors)
	if a.Summary != "sdc (MSK423Y20S3HBC): 12 I/O errors and 2 medium errors" || !strings.Contains(a.Description, "medium errors") {
		t.Errorf("summary %q description %q", a.Summary, a.Description)
	}
	if a.Replacement == nil || a.Replacement.Disk == nil || a.Replacement.Disk.Serial != kernSerial {
		t.Errorf("replacement %+v", a.Replacement)
	}
}

// A port that maps to no disk is reported by its name and joins nothing.
func TestKernelNameOnly(t *testing.T) {
	e := newTestEngine()
	observe(t, e, kernelEnv(t, t0, kernelEntry(nil, "ata3", t0, t0, map[string]int{"link_reset": 4, "link_slow": 1})), t0)
	a := find(e, nameLinkResets)
	if a == nil || a.Summary != "ata3: 4 link resets and 1 slow link response" || a.Labels["disk"] != "ata3" || !strings.Contains(a.Description, "SATA cable") {
		t.Fatalf("%+v", a)
	}
	if tr := e.hosts[testHost].Alerts[a.Fingerprint]; tr.Serial != "" || tr.A.Replacement != nil {
		t.Errorf("a name-only alert has serial %q", tr.Serial)
	}
}

// The kernel's view joins ZFS's and SMART's into one incident; its parts
// are not sent. The real upool, with the real failing Hitachi put behind
// gpt/usb1 under its by-id name by hand (as TestDiskIncident).
func TestDiskIncidentWithKernel(t *testing.T) {
	pools := statusPools(t, "zpool-status/freebsd-raidz1-gpt-label-online.txt")
	l := leafNamed(pools, "gpt/usb1")
	l.Name, l.Path = "usb-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-0:0-part1", "/dev/disk/by-id/usb-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-0:0-part1"
	l.ReadErrors = 2
	e := newTestEngine()
	// The kernel alone knows the disk (no SMART through this bridge): its
	// identity joins the vdev by the by-id name.
	observe(t, e, poolsEnv(t, pools, t0), t0)
	at := t0.Add(time.Second)
	observe(t, e, kernelEnv(t, at, kernelEntry(hitachi(), "usb 2-1", t0.Add(-10*time.Minute), at, map[string]int{"link_reset": 14})), at)
	ns := e.Tick(t0.Add(20 * time.Second))
	sameList(t, noteLines(ns), []string{
		"firing warning DiskIncident: sdc (MSK423Y20S3HBC) in upool/raidz1-0: 14 link resets in 10 min and 2 read errors",
		"--",
	})
	if d := ns[0].Alerts[0].Description; !strings.HasPrefix(d, "the kernel log and ZFS both report") {
		t.Errorf("description %q", d)
	}
	// SMART joins as the third side.
	r := smartReport(t, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	r.SmartPassed = nil
	setRaw(r, 5, 0)
	observe(t, e, smartEnv(t, r, t0.Add(time.Minute)), t0.Add(time.Minute))
	a := find(e, nameDiskIncident)
	if a == nil || a.Summary != "sdc (MSK423Y20S3HBC) in upool/raidz1-0: 14 link resets in 10 min, 2 read errors and 8 pending sectors" {
		t.Fatalf("%+v", a)
	}
	if !strings.HasPrefix(a.Description, "the kernel log, ZFS and SMART all report") {
		t.Errorf("description %q", a.Description)
	}
	for _, tr := range e.hosts[testHost].Alerts {
		if tr.Serial == kernSerial && tr.A.Name != nameDiskIncident && tr.A.State != alert.Resolved && !tr.Inhibited {
			t.Errorf("%s not inhibited by the incident", tr.A.Name)
		}
	}
}

// A kernel alert about a disk of a resilvering vdev: ResilverAtRisk.
func TestResilverAtRiskKernel(t *testing.T) {
	pools := statusPools(t, "zpool-status/freebsd-raidz1-replacing-guid-was-dev-resilvering.txt")
	l := leafNamed(pools, "gpt/usb1")
	l.Name, l.Path = "/dev/sdc", "/dev/sdc" // kernel-name join
	e := newTestEngine()
	observe(t, e, poolsEnv(t, pools, t0), t0)
	observe(t, e, kernelEnv(t, t0, kernelEntry(hitachi(), "sdc", t0, t0, map[string]int{"io_error": 3})), t0)
	a := find(e, nameResilverAtRisk)
	if a == nil || a.Severity != alert.Critical || !strings.Contains(a.Summary, "kernel-log trouble: 3 I/O errors") {
		t.Fatalf("%+v", a)
	}
}

// The bursts survive a restart (the state goes through JSON), and the
// history stays bounded whatever the kernel names.
func TestKernelStateBounded(t *testing.T) {
	e := newTestEngine()
	at := t0
	observe(t, e, kernelEnv(t, at, kernelEntry(hitachi(), "sdc", at, at, map[string]int{"link_reset": 1})), at)
	at = at.Add(5 * time.Minute)
	observe(t, e, kernelEnv(t, at, kernelEntry(hitachi(), "sdc", at, at, map[string]int{"link_reset": 1})), at)
	raw, err := json.Marshal(e.hosts[testHost])
	if err != nil {
		t.Fatal(err)
	}
	var h hostState
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	h.fixMaps()
	e2 := newTestEngine()
	e2.hosts[testHost] = &h
	at = at.Add(5 * time.Minute)
	observe(t, e2, kernelEnv(t, at, kernelEntry(hitachi(), "sdc", at, at, map[string]int{"link_reset": 1})), at)
	if a := find(e2, nameLinkResets); a == nil || a.Severity != alert.Critical {
		t.Fatalf("three bursts across a restart: %+v", a)
	}
	var many []facts.KernelDiskLog
	for i := range 3 * maxKernelDisks {
		many = append(many, kernelEntry(nil, fmt.Sprintf("ata%d", i), at, at, map[string]int{"link_reset": 1}))
	}
	observe(t, e2, kernelEnv(t, at, many...), at)
	if n := len(kernelMemory.peek(e2.hosts[testHost]).disks()); n > maxKernelDisks {
		t.Errorf("%d disks tracked", n)
	}
	for _, kd := range kernelMemory.peek(e2.hosts[testHost]).disks() {
		if len(kd.Link.Bursts) > maxKernelBursts || len(kd.Link.Example) > maxKernelText {
			t.Errorf("unbounded %+v", kd)
		}
	}
}

func TestKernelTimesSane(t *testing.T) {
	e := newTestEngine()
	// No times, and a time from the future: both count as now.
	observe(t, e, kernelEnv(t, t0, kernelEntry(nil, "nvme0", time.Time{}, time.Time{}, map[string]int{"link_reset": 1}),
		kernelEntry(nil, "nvme1", t0.Add(time.Hour), t0.Add(2*time.Hour), map[string]int{"timeout": 1})), t0)
	for _, kd := range kernelMemory.peek(e.hosts[testHost]).disks() {
		for _, k := range []kernelEpisode{kd.Link, kd.Media} {
			if k.active() && (!k.First.Equal(t0) || !k.Last.Equal(t0)) {
				t.Errorf("%s: %v..%v", kd.Ref, k.First, k.Last)
			}
		}
	}
	sameList(t, active(e), []string{"KernelDiskErrors warning disk=nvme1", "LinkResets warning disk=nvme0"})
}

// A storm that goes on for longer than the window is still a burst within it.
func TestKernelLongStorm(t *testing.T) {
	e := newTestEngine()
	for at := t0; at.Before(t0.Add(2 * time.Hour)); at = at.Add(30 * time.Second) {
		observe(t, e, kernelEnv(t, at, kernelEntry(nil, "ata2", at, at, map[string]int{"link_reset": 1})), at)
	}
	a := find(e, nameLinkResets)
	if a == nil || a.Evidence["bursts"] != "1" || a.Summary != "ata2: 240 link resets in 2 h" {
		t.Fatalf("%+v", a)
	}
	if a.Replacement != nil {
		t.Errorf("a link alert carries a replacement guide: %+v", a.Replacement)
	}
}

// Every kind the kernel log reader knows has words in the summaries, and
// falls to exactly one of the two rules (or, gone, to neither).
func TestKernelKindsCovered(t *testing.T) {
	for _, k := range kernlog.Kinds() {
		media, link := splitCauses(map[string]int{string(k): 1})
		switch {
		case k == kernlog.KindGone:
			if media != nil || link != nil {
				t.Errorf("%s counted", k)
			}
			continue
		case (media == nil) == (link == nil):
			t.Errorf("%s: media %v link %v", k, media, link)
		}
		if _, ok := kindWords[k]; !ok {
			t.Errorf("%s has no words", k)
		}
	}
}

// Each alert quotes a line of its own cause. The lines are real, from
// testdata/kernel-log/libata-sunxi-24-serror-interface.txt.
func TestKernelExamplePerCause(t *testing.T) {
	data, err := os.ReadFile("../testdata/kernel-log/libata-sunxi-24-serror-interface.txt")
	if err != nil {
		t.Fatal(err)
	}
	var failed, reset string
	for _, l := range strings.Split(string(data), "\n") {
		_, msg, _ := strings.Cut(l, "] ")
		switch {
		case failed == "" && strings.Contains(msg, "failed command"):
			failed = msg
		case reset == "" && strings.Contains(msg, "hard resetting link"):
			reset = msg
		}
	}
	if failed == "" || reset == "" {
		t.Fatal("lines not found")
	}
	e := newTestEngine()
	entry := kernelEntry(nil, "ata1", t0, t0, map[string]int{"command_failed": 1, "link_reset": 1})
	entry.Examples = []string{failed, reset}
	observe(t, e, kernelEnv(t, t0, entry), t0)
	if a := find(e, nameKernelDiskErrors); a == nil || !strings.HasSuffix(a.Description, failed) {
		t.Errorf("%+v", a)
	}
	if a := find(e, nameLinkResets); a == nil || !strings.HasSuffix(a.Description, reset) {
		t.Errorf("%+v", a)
	}
}

// BenchmarkObserveKernelLog: one kernel.log fact of a controller storm
// (as the follower sends every 2 s while it lasts) about 8 disks of a pool.
func BenchmarkObserveKernelLog(b *testing.B) {
	pools := statusPools(b, "captured/zfs-2.3.2/l4-read-errors.zpool-status.txt")
	var entries []facts.KernelDiskLog
	for i := range 8 {
		id := &disk.Identity{Serial: fmt.Sprintf("ZW%04d", i), Kernel: fmt.Sprintf("sd%c", 'a'+i)}
		entries = append(entries, kernelEntry(id, "ata1", t0, t0, map[string]int{"link_reset": 40, "command_failed": 200}))
	}
	env := kernelEnv(b, t0, entries...)
	e := newTestEngine()
	observe(b, e, poolsEnv(b, pools, t0), t0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now := t0.Add(time.Duration(i) * 2 * time.Second)
		if err := e.Observe(env, now); err != nil {
			b.Fatal(err)
		}
	}
}
