package daemon

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"
)

// settleSlack is how much the resident set may move without counting as
// growth: page-cache noise and the heap's own breathing between collections.
const settleSlack = 1 << 20

// settler gives memory back once a burst of activity is over. An incident
// (rules, notifications, history writes) or a look at the status page grows
// the heap and faults in code the quiet loop never runs; the Go runtime
// returns freed heap only slowly, and the kernel keeps code pages resident
// for good. So when the resident set has grown since the last settle and
// then stayed flat for `after`, the settler frees the heap to the system
// and drops the binary's pages again (trimExecutableRSS). It acts at most
// once per quiet spell and reads one /proc file per check.
type settler struct {
	after   time.Duration
	rss     func() (int64, bool) // resident bytes now
	settle  func()
	log     *slog.Logger
	settled int64     // resident bytes right after the last settle
	peak    int64     // highest resident bytes since then
	grewAt  time.Time // when peak last rose by more than the slack
}

func newSettler(after time.Duration, log *slog.Logger) *settler {
	return &settler{after: after, rss: residentBytes, settle: settleMemory, log: log}
}

// settleMemory returns freed heap to the system, then drops the binary's
// pages that start-up or the last burst touched.
func settleMemory() {
	debug.FreeOSMemory()
	trimExecutableRSS()
}

// run settles once start-up is over, then whenever activity has left
// memory behind and the daemon has been quiet for s.after.
func (s *settler) run(ctx context.Context) error {
	// Once start-up has touched what it touches, drop what it left behind.
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(10 * time.Second):
	}
	s.settle()
	if s.after <= 0 {
		<-ctx.Done()
		return nil
	}
	if r, ok := s.rss(); ok {
		s.settled, s.peak, s.grewAt = r, r, time.Now()
	} else {
		<-ctx.Done() // no way to tell growth here: start-up's trim is all
		return nil
	}
	t := time.NewTicker(max(s.after/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			r, ok := s.rss()
			if !ok || !s.observe(now, r) {
				continue
			}
			s.settle()
			after, _ := s.rss()
			s.log.Debug("memory settled after activity", "rss_peak_kb", s.peak>>10, "rss_before_kb", r>>10, "rss_after_kb", after>>10)
			s.settled, s.peak, s.grewAt = after, after, now
		}
	}
}

// observe takes one resident-set reading and says whether to settle now:
// it grew past the last settle's level, and has not grown for s.after.
func (s *settler) observe(now time.Time, rss int64) bool {
	if rss > s.peak+settleSlack {
		s.peak, s.grewAt = rss, now
		return false
	}
	return s.peak > s.settled+settleSlack && now.Sub(s.grewAt) >= s.after
}
