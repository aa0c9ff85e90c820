package maintenance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/zfs"
)

// fakeClock advances only when the test says so.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	waiter chan time.Time
	until  time.Time
	parked chan struct{}
}

func newFakeClock(t time.Time) *fakeClock {
	return &fakeClock{now: t, parked: make(chan struct{}, 1)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiter = make(chan time.Time, 1)
	c.until = c.now.Add(d)
	c.parked <- struct{}{}
	return c.waiter
}

// next waits for the scheduler to sleep, then jumps to its wake-up time.
func (c *fakeClock) next(t *testing.T) time.Time {
	t.Helper()
	select {
	case <-c.parked:
	case <-time.After(5 * time.Second):
		t.Fatal("scheduler did not go to sleep")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.until
	c.waiter <- c.now
	return c.now
}

// advanceTo lets the scheduler run every wake-up up to and including until.
func (c *fakeClock) advanceTo(t *testing.T, until time.Time) {
	t.Helper()
	for {
		select {
		case <-c.parked:
		case <-time.After(5 * time.Second):
			t.Fatal("scheduler did not go to sleep")
		}
		c.mu.Lock()
		if c.until.After(until) {
			// Put the sleeper back: the next call will find it parked.
			c.parked <- struct{}{}
			c.mu.Unlock()
			return
		}
		c.now = c.until
		c.waiter <- c.now
		c.mu.Unlock()
	}
}

type fakeActions struct {
	mu       sync.Mutex
	selfTest map[string]*SelfTestResult
	pools    []*zfs.Pool
	disks    []Disk
	log      []string
	events   []Event
	scrubOK  bool
}

func (a *fakeActions) Pools(context.Context) ([]*zfs.Pool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pools, nil
}
func (a *fakeActions) Disks(context.Context) ([]Disk, error) { return a.disks, nil }
func (a *fakeActions) StartScrub(_ context.Context, pool string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.log = append(a.log, "scrub "+pool)
	return nil
}
func (a *fakeActions) StartSelfTest(_ context.Context, d Disk, long bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	kind := "short"
	if long {
		kind = "long"
	}
	a.log = append(a.log, kind+" "+d.Device)
	return nil
}
func (a *fakeActions) SelfTestLog(_ context.Context, d Disk) (*SelfTestResult, uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.selfTest[d.Device], 100, nil
}
func (a *fakeActions) Publish(_ context.Context, ev Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, ev)
	return nil
}
func (a *fakeActions) snapshot() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.log...)
}

func TestScrubMonthlySkippedWhileResilvering(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.Local)
	clock := newFakeClock(start)
	act := &fakeActions{pools: []*zfs.Pool{
		{Name: "vault", State: "ONLINE"},
		{Name: "fast", State: "DEGRADED", Scan: zfs.Scan{Function: zfs.ScanResilver, State: zfs.ScanStateScanning}},
	}}
	sch, err := ParseSchedule("0 3 1 * *", "", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go (&Scheduler{Schedule: sch, Actions: act, Clock: clock}).Run(ctx)
	at := clock.next(t)
	if want := time.Date(2026, 12, 1, 3, 0, 0, 0, time.Local); !at.Equal(want) {
		t.Fatalf("first scrub at %v, want %v", at, want)
	}
	clock.next(t) // the scheduler ran the job and sleeps until January
	if got := strings.Join(act.snapshot(), ","); got != "scrub vault" {
		t.Fatalf("actions = %q", got)
	}
	var skipped bool
	for _, ev := range act.events {
		if ev.Target == "fast" && ev.Action == "skipped" && strings.Contains(ev.Reason, "resilver") {
			skipped = true
		}
	}
	if !skipped {
		t.Fatalf("resilvering pool not reported skipped: %+v", act.events)
	}
}

func TestSelfTestsStaggeredPerVdevAndDeferredDuringScrub(t *testing.T) {
	start := time.Date(2026, 11, 29, 1, 0, 0, 0, time.Local) // a Sunday
	clock := newFakeClock(start)
	act := &fakeActions{}
	for i := 0; i < 3; i++ {
		act.disks = append(act.disks, Disk{Device: fmt.Sprintf("/dev/disk/by-id/ata-A%d", i), Pool: "vault", Vdev: "raidz2-0"})
	}
	act.disks = append(act.disks, Disk{Device: "/dev/disk/by-id/nvme-B", Pool: "fast", Vdev: "mirror-0"})
	act.pools = []*zfs.Pool{{Name: "fast", Scan: zfs.Scan{Function: zfs.ScanScrub, State: zfs.ScanStateScanning}}}
	sch, _ := ParseSchedule("", "0 2 * * 0", "", 10*time.Minute, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go (&Scheduler{Schedule: sch, Actions: act, Clock: clock}).Run(ctx)

	at := func(h, m int) time.Time { return time.Date(2026, 11, 29, h, m, 0, 0, time.Local) }
	clock.advanceTo(t, at(2, 0)) // first vault disk; fast is scrubbing → deferred
	if got := act.snapshot(); len(got) != 1 || got[0] != "short /dev/disk/by-id/ata-A0" {
		t.Fatalf("at 02:00 ran %v", got)
	}
	clock.advanceTo(t, at(2, 10)) // second vault disk, 10 min later
	if got := act.snapshot(); len(got) != 2 || got[1] != "short /dev/disk/by-id/ata-A1" {
		t.Fatalf("at 02:10 ran %v", got)
	}
	act.mu.Lock()
	act.pools = nil // the scrub finished
	act.mu.Unlock()
	clock.advanceTo(t, at(3, 0)) // 02:20 third disk, 03:00 the deferred NVMe test
	got := strings.Join(act.snapshot(), ",")
	want := "short /dev/disk/by-id/ata-A0,short /dev/disk/by-id/ata-A1,short /dev/disk/by-id/ata-A2,short /dev/disk/by-id/nvme-B"
	if got != want {
		t.Fatalf("ran %q\nwant %q", got, want)
	}
}

func TestParseScheduleRejectsGarbage(t *testing.T) {
	if _, err := ParseSchedule("every monday", "", "", 0, 0); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestOutcomesArePublished(t *testing.T) {
	start := time.Date(2026, 11, 29, 1, 0, 0, 0, time.Local) // a Sunday
	clock := newFakeClock(start)
	dev := "/dev/disk/by-id/ata-A0"
	act := &fakeActions{
		disks:    []Disk{{Device: dev, Pool: "vault", Vdev: "raidz2-0"}},
		pools:    []*zfs.Pool{{Name: "vault", State: "ONLINE"}},
		selfTest: map[string]*SelfTestResult{dev: {Type: "Short offline", Passed: true, Status: "Completed without error", LifetimeHours: 90}},
	}
	sch, _ := ParseSchedule("0 3 29 * *", "0 2 * * 0", "", 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go (&Scheduler{Schedule: sch, Actions: act, Clock: clock}).Run(ctx)
	at := func(h, m int) time.Time { return time.Date(2026, 11, 29, h, m, 0, 0, time.Local) }
	clock.advanceTo(t, at(2, 10)) // test starts at 02:00; at 02:10 the log shows the old entry
	act.mu.Lock()
	act.selfTest[dev] = &SelfTestResult{Type: "Short offline", Passed: false, Status: "Completed: read failure", LifetimeHours: 100}
	act.mu.Unlock()
	clock.advanceTo(t, at(3, 0)) // 02:20 a new entry; 03:00 the scrub starts
	act.mu.Lock()
	act.pools = []*zfs.Pool{{Name: "vault", State: "ONLINE", Scan: zfs.Scan{Function: zfs.ScanScrub, State: zfs.ScanStateFinished, Errors: 0, RepairedBytes: 4096}}}
	act.mu.Unlock()
	clock.advanceTo(t, at(3, 10))
	act.mu.Lock()
	defer act.mu.Unlock()
	var got []string
	for _, ev := range act.events {
		s := ev.Job + " " + ev.Action
		if ev.Passed != nil {
			s += fmt.Sprintf(" passed=%v", *ev.Passed)
		}
		got = append(got, s)
	}
	want := "smart_short started,smart_short finished passed=false,scrub started,scrub finished passed=true"
	if strings.Join(got, ",") != want {
		t.Fatalf("events %q\nwant   %q", strings.Join(got, ","), want)
	}
}
