// Package maintenance runs the scheduled work that finds problems before they
// become failures: monthly scrubs and SMART self-tests. Schedules are cron
// expressions (robfig/cron parses them); the loop itself runs on an injected
// clock so that it can be tested without waiting a month.
package maintenance

import (
	"context"
	"fmt"
	"github.com/zwatch/zwatch/facts"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/zwatch/zwatch/model/zfs"
)

// Job kinds, as published in Event.Job.
const (
	JobScrub     = "scrub"
	JobShortTest = "smart_short"
	JobLongTest  = "smart_long"
)

// Event is the payload of zwatch.v1.<host>.maintenance (facts.Maintenance),
// declared with the other kinds of fact.
type Event = facts.MaintenanceData

// Outcome checks: how often a running job is looked at, and for how long.
const (
	checkEvery = 10 * time.Minute
	checkFor   = 7 * 24 * time.Hour
)

// SelfTestResult is the newest entry of a disk's self-test log.
type SelfTestResult struct {
	Type          string
	Passed        bool
	Status        string
	LifetimeHours uint64
}

// Disk is a disk to self-test with its pool membership.
type Disk struct {
	Device string // by-id path preferred
	Type   string // smartctl -d type, if any
	Pool   string // "" when in no pool
	Vdev   string // top-level vdev, for staggering
}

// Clock lets tests drive time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Actions are the side effects, injected so tests run no commands.
type Actions interface {
	Pools(ctx context.Context) ([]*zfs.Pool, error)
	Disks(ctx context.Context) ([]Disk, error)
	StartScrub(ctx context.Context, pool string) error
	StartSelfTest(ctx context.Context, d Disk, long bool) error
	// SelfTestLog returns the newest self-test log entry (nil if none) and
	// the disk's power-on hours.
	SelfTestLog(ctx context.Context, d Disk) (*SelfTestResult, uint64, error)
	Publish(ctx context.Context, ev Event) error
}

// Schedule is the parsed config.
type Schedule struct {
	Scrub, Short, Long        cron.Schedule // nil: off
	ShortStagger, LongStagger time.Duration
	// Retry is how long a self-test waits when its pool is scrubbing.
	Retry time.Duration
}

// ParseSchedule parses the cron strings ("" = off).
func ParseSchedule(scrub, short, long string, shortStagger, longStagger time.Duration) (Schedule, error) {
	s := Schedule{ShortStagger: shortStagger, LongStagger: longStagger, Retry: time.Hour}
	for _, f := range []struct {
		expr string
		dst  *cron.Schedule
	}{{scrub, &s.Scrub}, {short, &s.Short}, {long, &s.Long}} {
		if f.expr == "" {
			continue
		}
		p, err := cron.ParseStandard(f.expr)
		if err != nil {
			return s, fmt.Errorf("schedule %q: %w", f.expr, err)
		}
		*f.dst = p
	}
	return s, nil
}

// Scheduler fires the jobs.
type Scheduler struct {
	Schedule Schedule
	Actions  Actions
	Clock    Clock
	Log      *slog.Logger
}

// pending is one job due at a time, or a check on one that runs.
type pending struct {
	at   time.Time
	job  string
	disk *Disk // self-tests only
	// check: look at how a started job ended.
	check   bool
	pool    string
	started time.Time
	before  *SelfTestResult // newest log entry when the test started
}

// Run fires jobs until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	clock := s.Clock
	if clock == nil {
		clock = realClock{}
	}
	log := s.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := clock.Now()
	next := map[string]time.Time{}
	for job, sch := range s.schedules() {
		next[job] = sch.Next(now)
	}
	var queue []pending
	for {
		// Expand cron firings into queue entries.
		now = clock.Now()
		for job, sch := range s.schedules() {
			for !next[job].After(now) {
				queue = append(queue, s.expand(ctx, job, next[job], log)...)
				next[job] = sch.Next(next[job])
			}
		}
		sort.SliceStable(queue, func(i, j int) bool { return queue[i].at.Before(queue[j].at) })
		var keep []pending
		for _, p := range queue {
			if p.at.After(now) {
				keep = append(keep, p)
				continue
			}
			if p.check {
				if again := s.checkOutcome(ctx, p, now, log); again {
					p.at = now.Add(checkEvery)
					keep = append(keep, p)
				}
				continue
			}
			retry, follow := s.fire(ctx, p, now, log)
			if retry {
				p.at = now.Add(s.retry())
				keep = append(keep, p)
			}
			keep = append(keep, follow...)
		}
		queue = keep
		wake := time.Time{}
		for _, t := range next {
			if wake.IsZero() || t.Before(wake) {
				wake = t
			}
		}
		for _, p := range queue {
			if wake.IsZero() || p.at.Before(wake) {
				wake = p.at
			}
		}
		if wake.IsZero() {
			<-ctx.Done()
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-clock.After(wake.Sub(now)):
		}
	}
}

func (s *Scheduler) retry() time.Duration {
	if s.Schedule.Retry > 0 {
		return s.Schedule.Retry
	}
	return time.Hour
}

func (s *Scheduler) schedules() map[string]cron.Schedule {
	m := map[string]cron.Schedule{}
	if s.Schedule.Scrub != nil {
		m[JobScrub] = s.Schedule.Scrub
	}
	if s.Schedule.Short != nil {
		m[JobShortTest] = s.Schedule.Short
	}
	if s.Schedule.Long != nil {
		m[JobLongTest] = s.Schedule.Long
	}
	return m
}

// expand turns one firing into jobs: one scrub per pool (fired at once, the
// pools are listed then), or one self-test per disk, staggered within each
// vdev so that a vdev never has all its disks testing together.
func (s *Scheduler) expand(ctx context.Context, job string, at time.Time, log *slog.Logger) []pending {
	if job == JobScrub {
		return []pending{{at: at, job: job}}
	}
	disks, err := s.Actions.Disks(ctx)
	if err != nil {
		log.Warn("maintenance: cannot list disks for self-tests", "err", err)
		return nil
	}
	stagger := s.Schedule.ShortStagger
	if job == JobLongTest {
		stagger = s.Schedule.LongStagger
	}
	pos := map[string]int{}
	var out []pending
	for i := range disks {
		d := disks[i]
		group := d.Pool + "/" + d.Vdev
		if d.Pool == "" {
			group = "/" + d.Device // not in a pool: nothing to stagger against
		}
		out = append(out, pending{at: at.Add(time.Duration(pos[group]) * stagger), job: job, disk: &d})
		pos[group]++
	}
	return out
}

// fire runs one due job; it reports true when the job must wait and retry,
// and the checks that will report how the jobs it started end.
func (s *Scheduler) fire(ctx context.Context, p pending, now time.Time, log *slog.Logger) (bool, []pending) {
	pools, err := s.Actions.Pools(ctx)
	if err != nil {
		log.Warn("maintenance: cannot read pool state", "err", err)
	}
	scanning := map[string]string{}
	for _, pl := range pools {
		if pl.Scan.State == zfs.ScanStateScanning {
			scanning[pl.Name] = pl.Scan.Function
		}
	}
	pub := func(ev Event) {
		ev.At = now
		if err := s.Actions.Publish(ctx, ev); err != nil {
			log.Warn("maintenance: publish", "err", err)
		}
	}
	var follow []pending
	if p.job == JobScrub {
		for _, pl := range pools {
			if fn, busy := scanning[pl.Name]; busy {
				pub(Event{Job: JobScrub, Target: pl.Name, Action: "skipped", Reason: "a " + fn + " is running"})
				continue
			}
			if pl.State == zfs.StateFaulted || pl.State == zfs.StateUnavail || pl.State == zfs.StateSuspended {
				pub(Event{Job: JobScrub, Target: pl.Name, Action: "skipped", Reason: "pool is " + pl.State})
				continue
			}
			if err := s.Actions.StartScrub(ctx, pl.Name); err != nil {
				pub(Event{Job: JobScrub, Target: pl.Name, Action: "failed", Reason: err.Error()})
				continue
			}
			pub(Event{Job: JobScrub, Target: pl.Name, Action: "started"})
			follow = append(follow, pending{at: now.Add(checkEvery), job: JobScrub, check: true, pool: pl.Name, started: now})
		}
		return false, follow
	}
	d := *p.disk
	if fn, busy := scanning[d.Pool]; busy && d.Pool != "" {
		pub(Event{Job: p.job, Target: d.Device, Action: "deferred", Reason: fmt.Sprintf("pool %s is running a %s", d.Pool, fn)})
		return true, nil
	}
	before, _, _ := s.Actions.SelfTestLog(ctx, d)
	if err := s.Actions.StartSelfTest(ctx, d, p.job == JobLongTest); err != nil {
		pub(Event{Job: p.job, Target: d.Device, Action: "failed", Reason: err.Error()})
		return false, nil
	}
	pub(Event{Job: p.job, Target: d.Device, Action: "started"})
	return false, []pending{{at: now.Add(checkEvery), job: p.job, disk: &d, check: true, started: now, before: before}}
}

// checkOutcome publishes how a started job ended; true means look again.
func (s *Scheduler) checkOutcome(ctx context.Context, p pending, now time.Time, log *slog.Logger) bool {
	pub := func(ev Event) {
		ev.At = now
		if err := s.Actions.Publish(ctx, ev); err != nil {
			log.Warn("maintenance: publish", "err", err)
		}
	}
	giveUp := now.Sub(p.started) > checkFor
	if p.job == JobScrub {
		pools, err := s.Actions.Pools(ctx)
		if err != nil {
			return !giveUp
		}
		for _, pl := range pools {
			if pl.Name != p.pool {
				continue
			}
			sc := pl.Scan
			switch {
			case sc.State == zfs.ScanStateScanning || sc.State == zfs.ScanStatePaused:
				return !giveUp
			case sc.Function == zfs.ScanScrub && (sc.State == zfs.ScanStateFinished || sc.State == zfs.ScanStateCanceled):
				ok := sc.State == zfs.ScanStateFinished && sc.Errors == 0
				pub(Event{Job: JobScrub, Target: p.pool, Action: "finished", Passed: &ok,
					Reason: fmt.Sprintf("scrub %s: %d errors, %d bytes repaired", sc.State, sc.Errors, sc.RepairedBytes)})
				return false
			}
			pub(Event{Job: JobScrub, Target: p.pool, Action: "unknown", Reason: "the pool shows no scrub result (a resilver may have replaced it)"})
			return false
		}
		pub(Event{Job: JobScrub, Target: p.pool, Action: "unknown", Reason: "the pool is gone"})
		return false
	}
	res, _, err := s.Actions.SelfTestLog(ctx, *p.disk)
	// A new newest entry is this test's result (one "in progress" is not yet).
	if err == nil && res != nil && (p.before == nil || *res != *p.before) && !strings.Contains(strings.ToLower(res.Status), "progress") {
		pub(Event{Job: p.job, Target: p.disk.Device, Action: "finished", Passed: &res.Passed,
			Reason: fmt.Sprintf("%s: %s", res.Type, res.Status)})
		return false
	}
	if giveUp {
		pub(Event{Job: p.job, Target: p.disk.Device, Action: "unknown", Reason: "no result in the self-test log after 7 days"})
		return false
	}
	return true
}
