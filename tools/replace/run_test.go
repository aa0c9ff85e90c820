package replace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// seqStatus stands in for zpool status: each call returns the next state
// of a captured sequence and then stays on the last one.
type seqStatus struct {
	mu     sync.Mutex
	states [][]*zfs.Pool
	calls  int
}

func (s *seqStatus) Status(_ context.Context, pool string) ([]*zfs.Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := min(s.calls, len(s.states)-1)
	s.calls++
	return s.states[i], nil
}

func statusSeq(t *testing.T, files ...string) *seqStatus {
	s := &seqStatus{}
	for _, f := range files {
		s.states = append(s.states, loadPools(t, f))
	}
	return s
}

type fixedDisks []disk.Identity

func (f fixedDisks) Disks(context.Context) ([]disk.Identity, error) { return f, nil }

// The real life of tresor1: a mirror member vanished (listed by GUID with
// "was .../-part1"), the owner replaced it with a Seagate, the resilver ran.
var tresorSeq = []string{
	"openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt",
	"openzfs-2.x-mirror-replacing-guid-resilver-no-estimate.txt",
	"openzfs-2.x-mirror-replacing-guid-resilver-no-estimate.txt",
	"derived/tresor1-after-resilver.txt",
}

func tresorOptions(t *testing.T, out *bytes.Buffer, r Runner) Options {
	return Options{
		Out: out, Runner: r, Status: statusSeq(t, tresorSeq...),
		Disks: fixedDisks{tresorSurvivor, tresorNew, tresorBoot},
		Probe: bootProbe, Poll: time.Millisecond,
		Now: steppingClock(time.Date(2022, 4, 19, 0, 58, 0, 0, time.UTC), time.Minute),
	}
}

func steppingClock(start time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

const tresorReplace = "zpool replace tresor1 6544112441320430488 /dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV"

// With one failing device and one usable disk, both are proposed and --yes
// takes them: the command is exactly the one the owner ran.
func TestRunYesProposesTheOnlyChoices(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{}
	o := tresorOptions(t, &out, r)
	o.Yes = true
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got := r.commands(); !slices.Equal(got, []string{tresorReplace}) {
		t.Errorf("ran %v", got)
	}
	contains(t, out.String(),
		"6544112441320430488 — UNAVAIL, was /dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104-part1",
		"/dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV  sdb  6 TB",
		"refused: it is in use by pool tresor1",
		"refused: it is mounted at /boot/efi, /",
		"    "+tresorReplace,
		"0.00% resilvered",
		"Resilver finished",
		"Pool tresor1 is ONLINE",
		"resilvered 2.51T in 07:02:11 with 0 errors",
		"zpool scrub tresor1",
	)
}

func TestRunAsksAndRunsOnYes(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{}
	o := tresorOptions(t, &out, r)
	o.In = strings.NewReader("yes\n")
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	contains(t, out.String(), "Replace 6544112441320430488 with /dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV in pool tresor1? [y/N]")
	if len(r.calls) != 1 {
		t.Errorf("ran %v", r.commands())
	}
}

func TestRunAbortsOnNo(t *testing.T) {
	for _, answer := range []string{"n\n", "\n", "", "maybe\n"} {
		var out bytes.Buffer
		r := &fakeRunner{}
		o := tresorOptions(t, &out, r)
		o.In = strings.NewReader(answer)
		if err := Run(context.Background(), o); !errors.Is(err, ErrAborted) {
			t.Errorf("answer %q: err %v", answer, err)
		}
		if len(r.calls) != 0 {
			t.Errorf("answer %q: ran %v", answer, r.commands())
		}
	}
}

func TestRunWithoutInputNeedsYes(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{}
	err := Run(context.Background(), tresorOptions(t, &out, r))
	if err == nil || !strings.Contains(err.Error(), "--yes") || len(r.calls) != 0 {
		t.Errorf("err %v, ran %v", err, r.commands())
	}
}

func TestRunDryRunRunsNothing(t *testing.T) {
	var out bytes.Buffer
	o := tresorOptions(t, &out, nil) // no runner at all
	o.DryRun = true
	status := o.Status.(*seqStatus)
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	contains(t, out.String(), "    "+tresorReplace, "Dry run: nothing was run", "zpool status -v tresor1", "zpool scrub tresor1")
	if status.calls != 1 {
		t.Errorf("dry run read status %d times; it must not follow a resilver", status.calls)
	}
}

// The same run named explicitly, the new disk by serial, kernel name or
// by-id name.
func TestRunNamedOldAndNew(t *testing.T) {
	for _, names := range [][2]string{
		{"6544112441320430488", "ZR12E9YV"},
		{"/dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104-part1", "sdb"},
		{"WD-WMC4N1768104", "/dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV"},
		{"ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104", "ata-ST6000VX001-2BD186_ZR12E9YV"},
	} {
		var out bytes.Buffer
		r := &fakeRunner{}
		o := tresorOptions(t, &out, r)
		o.Pool, o.Old, o.New, o.Yes = "tresor1", names[0], names[1], true
		if err := Run(context.Background(), o); err != nil {
			t.Fatalf("%v: %v\n%s", names, err, out.String())
		}
		if got := r.commands(); !slices.Equal(got, []string{tresorReplace}) {
			t.Errorf("%v: ran %v", names, got)
		}
	}
}

func TestRunRefusals(t *testing.T) {
	small := disk.Identity{Serial: "WD-WCC4M0000002", Model: "WDC WD20EFRX-68EUZN0", Kernel: "sde",
		ByID: "/dev/disk/by-id/ata-WDC_WD20EFRX-68EUZN0_WD-WCC4M0000002", SizeBytes: 2000398934016, LogicalSector: 512}
	cases := []struct {
		name, new string
		want      []string
	}{
		{"too small", "sde", []string{"ata-WDC_WD20EFRX-68EUZN0_WD-WCC4M0000002", "WD-WCC4M0000002", "too small", "Fix: use a disk at least as large"}},
		{"in a pool", "WD-WMC4N2558226", []string{"ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N2558226", "in use by pool tresor1", "Fix: pick a disk that is in no pool"}},
		{"mounted, partitioned", "sdc", []string{"ata-Samsung_SSD_860_EVO_250GB_S3Z8NB0K123456A", "mounted at /boot/efi, /", "partitions", "wipefs -a"}},
		{"unknown disk", "sdx", []string{`no disk "sdx" found`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			r := &fakeRunner{}
			o := tresorOptions(t, &out, r)
			o.Disks = fixedDisks{tresorSurvivor, tresorNew, tresorBoot, small}
			o.New, o.Yes = c.new, true
			err := Run(context.Background(), o)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("err %v", err)
			}
			contains(t, err.Error(), c.want...)
			if len(r.calls) != 0 {
				t.Errorf("ran %v", r.commands())
			}
		})
	}
}

// The failing disk is still attached (FAULTED): naming it as the new disk
// is refused as the same disk.
func TestRunRefusesOldAsNew(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{}
	o := tresorOptions(t, &out, r)
	o.Status = statusSeq(t, "openzfs-2.x-mirror-faulted-too-many-errors-truncated.txt")
	o.Disks = fixedDisks{tresorSurvivor, tresorNew, tresorOld}
	o.New, o.Yes = "WD-WMC4N1768104", true
	err := Run(context.Background(), o)
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("err %v", err)
	}
	contains(t, err.Error(), "WD-WMC4N1768104", "it is the disk being replaced")
	// And with the Seagate, the present disk is named as zpool shows it.
	o.New = "sdb"
	o.Status = statusSeq(t, "openzfs-2.x-mirror-faulted-too-many-errors-truncated.txt", "derived/tresor1-after-resilver.txt")
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := "zpool replace tresor1 ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104 /dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV"
	if got := r.commands(); !slices.Equal(got, []string{want}) {
		t.Errorf("ran %v", got)
	}
}

// A real FreeBSD sequence: gpt/usb0 REMOVED, replaced, resilver at 41.91%,
// then finished (the pool has meanwhile lost gpt/usb2, as captured).
func TestRunFollowsRealFreeBSDResilver(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{}
	newDisk := disk.Identity{Serial: "USB4", Model: "Flash Disk", Kernel: "da4", SizeBytes: 16008609792, LogicalSector: 512,
		ByID: "/dev/disk/by-id/usb-Generic_Flash_Disk_USB4-0:0"}
	o := Options{Out: &out, Runner: r, Yes: true, Pool: "upool", Old: "gpt/usb0",
		Status: statusSeq(t, "freebsd-raidz1-degraded-removed-after-resilver.txt",
			"freebsd-raidz1-replacing-removed-resilver-in-progress.txt",
			"freebsd-raidz1-guid-unavail-was-dev.txt"),
		Disks: fixedDisks{newDisk}, Probe: fakeProbe{}, Poll: time.Millisecond}
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := "zpool replace upool gpt/usb0 /dev/disk/by-id/usb-Generic_Flash_Disk_USB4-0:0"
	if got := r.commands(); !slices.Equal(got, []string{want}) {
		t.Errorf("ran %v", got)
	}
	contains(t, out.String(), "41.91% resilvered, 20.3 MiB/s, 18s to go", "Pool upool is DEGRADED",
		"resilvered 158M in 00:00:38 with 0 errors")
}

// Started on a pool already resilvering onto a new disk, Run only follows.
func TestRunFollowsReplacementInProgress(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{}
	o := Options{Out: &out, Runner: r, Pool: "upool",
		Status: statusSeq(t, "freebsd-raidz1-replacing-removed-resilver-in-progress.txt",
			"freebsd-raidz1-replacing-removed-resilver-in-progress.txt",
			"freebsd-raidz1-guid-unavail-was-dev.txt"),
		Disks: fixedDisks{}, Probe: fakeProbe{}, Poll: time.Millisecond, Old: "gpt/usb0"}
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(r.calls) != 0 {
		t.Errorf("ran %v", r.commands())
	}
	contains(t, out.String(), "already being replaced", "Resilver finished")
}

// A resilver that ends with the replacing group still in place (ZFS keeps
// the old device when the resilver met errors) is reported, not waited on
// forever.
func TestRunReportsStuckReplacement(t *testing.T) {
	stuck := loadPools(t, "openzfs-2.x-mirror-replacing-guid-resilver-no-estimate.txt")
	stuck[0].Scan.State = zfs.ScanStateFinished
	stuck[0].Scan.Errors = 3
	s := statusSeq(t, tresorSeq[:2]...)
	s.states = append(s.states, stuck)
	var out bytes.Buffer
	o := tresorOptions(t, &out, &fakeRunner{})
	o.Status, o.Yes = s, true
	err := Run(context.Background(), o)
	if !errors.Is(err, ErrResilverStuck) {
		t.Fatalf("err %v", err)
	}
	contains(t, err.Error(), "resilver errors: 3", "zpool status -v tresor1")
}

func TestRunSeveralFailingNeedsAName(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{}
	o := Options{Out: &out, Runner: r, Yes: true,
		Status: statusSeq(t, "freebsd-raidz2-faulted-during-resilver-no-estimate.txt", "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt"),
		Disks:  fixedDisks{tresorNew}, Probe: fakeProbe{}, Poll: time.Millisecond}
	// Two pools' states are read at once only when the source has them: use
	// a source with both pools.
	both := append(loadPools(t, "freebsd-raidz2-degraded-faulted-too-many-errors.txt"), loadPools(t, "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt")...)
	o.Status = &seqStatus{states: [][]*zfs.Pool{both}}
	err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "2 failing devices") || len(r.calls) != 0 {
		t.Errorf("err %v ran %v", err, r.commands())
	}
	// Interactively the person picks one.
	o.Yes, o.In = false, strings.NewReader("2\ny\n")
	o.Status = &seqStatus{states: [][]*zfs.Pool{both, loadPools(t, "derived/tresor1-after-resilver.txt")}}
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got := r.commands(); !slices.Equal(got, []string{tresorReplace}) {
		t.Errorf("ran %v", got)
	}
}

func TestRunNothingFailing(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{}
	o := Options{Out: &out, Runner: r, Status: statusSeq(t, "derived/tresor1-after-resilver.txt"),
		Disks: fixedDisks{tresorNew}, Probe: fakeProbe{}}
	if err := Run(context.Background(), o); err != nil || len(r.calls) != 0 {
		t.Errorf("err %v ran %v", err, r.commands())
	}
	contains(t, out.String(), "No failing device")
}

func TestRunReplaceFailure(t *testing.T) {
	var out bytes.Buffer
	r := &fakeRunner{answer: func(argv []string) (execx.Result, error) {
		return execx.Result{ExitCode: 1}, &execx.Error{Kind: execx.KindFailed, Command: strings.Join(argv, " "), ExitCode: 1,
			Stderr: "cannot replace 6544112441320430488 with /dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV: device is too small"}
	}}
	o := tresorOptions(t, &out, r)
	o.Yes = true
	err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "device is too small") {
		t.Errorf("err %v", err)
	}
}

func TestRunStopsFollowingOnCancel(t *testing.T) {
	var out bytes.Buffer
	o := tresorOptions(t, &out, &fakeRunner{})
	o.Status = statusSeq(t, tresorSeq[:2]...) // the resilver never ends
	o.Yes, o.Poll = true, 5*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := Run(ctx, o)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	contains(t, out.String(), "The resilver goes on without zwatch", "zpool status -v tresor1")
}

func TestRunAshiftFromSourceRefuses4Kn(t *testing.T) {
	fourKn := tresorNew
	fourKn.LogicalSector, fourKn.PhysicalSector = 4096, 4096
	var out bytes.Buffer
	r := &fakeRunner{}
	o := tresorOptions(t, &out, r)
	o.Status = ashiftStatus{statusSeq(t, tresorSeq...), 9}
	o.Disks, o.Yes = fixedDisks{tresorSurvivor, fourKn}, true
	err := Run(context.Background(), o)
	if !errors.Is(err, ErrRefused) || len(r.calls) != 0 {
		t.Fatalf("err %v ran %v", err, r.commands())
	}
	contains(t, out.String(), "ashift=9")
}

type ashiftStatus struct {
	*seqStatus
	ashift int
}

func (a ashiftStatus) Ashift(context.Context, string) (int, error) { return a.ashift, nil }

func TestZpoolStatusFallsBackToText(t *testing.T) {
	text := readStatusFile(t, "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt")
	r := &fakeRunner{answer: func(argv []string) (execx.Result, error) {
		if slices.Contains(argv, "-j") {
			return execx.Result{ExitCode: 2}, &execx.Error{Kind: execx.KindFailed, Command: strings.Join(argv, " "), Stderr: "invalid option 'j'"}
		}
		return execx.Result{Stdout: text}, nil
	}}
	z := ZpoolStatus{Runner: r, ParseJSON: zfs.ParseStatusJSON}
	pools, err := z.Status(context.Background(), "tresor1")
	if err != nil || len(pools) != 1 || pools[0].Name != "tresor1" {
		t.Fatalf("pools %v err %v", pools, err)
	}
	if got := r.commands(); !slices.Equal(got, []string{"zpool status -j --json-int -p tresor1", "zpool status -p -s tresor1"}) {
		t.Errorf("commands %v", got)
	}
}

func readStatusFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(statusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestZpoolStatusJSONOnRealCapture(t *testing.T) {
	j, err := os.ReadFile(filepath.Join(captureDir, "a.zpool-status-j.json"))
	if err != nil {
		t.Skip("capture not present:", err)
	}
	r := &fakeRunner{answer: func([]string) (execx.Result, error) { return execx.Result{Stdout: j}, nil }}
	pools, err := ZpoolStatus{Runner: r, ParseJSON: zfs.ParseStatusJSON}.Status(context.Background(), "")
	if err != nil || len(pools) != 2 {
		t.Fatalf("pools %d err %v", len(pools), err)
	}
	if got := r.commands(); !slices.Equal(got, []string{"zpool status -j --json-int -p"}) {
		t.Errorf("commands %v", got)
	}
}
