// Package remote replaces a failing disk on a person's answer from the
// phone (actions.replace): a page's Replace button asks; zwatch replace's
// own checks pick the disks that qualify now; the person confirms the exact
// command once more; the replacement runs through the same code as `zwatch
// replace` and its resilver is reported back where the question was asked.
//
// It asks with the disks plugged in at the tap, not at the page: the new
// disk usually goes in after the page arrived.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/tools/replace"
)

// maxOffers bounds the disks one question offers (one button each).
const maxOffers = 3

// Service answers the replacement's verbs. Every field but Log, Now, Poll
// and Smart is required.
type Service struct {
	Bus *bus.Bus
	// Host is this machine: only its disks are replaced.
	Host string
	// Incident returns an incident's firing alerts (rules.ReadCurrent).
	Incident func(ctx context.Context, id string) ([]alert.Alert, error)
	// Acknowledge records that someone is on the incident, as the ack
	// button does: a confirmed replacement acknowledges it.
	Acknowledge func(ctx context.Context, incident, by, source string) error
	Runner      replace.Runner
	Status      replace.StatusSource
	Disks       replace.DiskSource
	Probe       replace.Probe
	// Smart reads a disk's overall SMART health: passed, failed, or nil
	// when the disk offers none (QEMU's, some USB bridges).
	Smart func(ctx context.Context, device string) (*bool, error)
	// Background is what replacements run in: the daemon's life, not the
	// tap's request.
	Background context.Context
	Poll       time.Duration
	Now        func() time.Time
	Log        *slog.Logger

	mu      sync.Mutex
	running map[string]bool // pools with a replacement started here
	wg      sync.WaitGroup
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Wait returns when the replacements started here have ended.
func (s *Service) Wait() { s.wg.Wait() }

// target is the disk of an incident that can be replaced.
type target struct {
	incident string
	repl     alert.Replacement
}

// Ask answers Replace on incident: why it is not offered, that no disk
// qualifies yet, or the question with a button per disk that does.
func (s *Service) Ask(ctx context.Context, incident string) (answer.Outcome, error) {
	alerts, err := s.Incident(ctx, incident)
	if err != nil {
		return answer.Outcome{}, err
	}
	if len(alerts) == 0 {
		return answer.Outcome{}, answer.ErrGone
	}
	t, why := targetOf(alerts, s.Host, incident)
	if why != "" {
		return answer.Outcome{Text: why}, nil
	}
	pool, leaf, why, err := s.look(ctx, t.repl)
	if err != nil || why != "" {
		return answer.Outcome{Text: why}, err
	}
	var plan replace.Plan
	planErr := replace.Run(ctx, s.options(t.repl, "", &plan))
	if plan.Old == nil {
		return answer.Outcome{Text: "zwatch replace finds nothing to replace: " + errText(planErr)}, nil
	}
	qualify, refused := s.qualifying(ctx, plan.Candidates)
	if len(qualify) == 0 {
		return answer.Outcome{Text: noDiskText(pool.Name, plan, refused)}, nil
	}
	kv, err := stateKV(ctx, s.Bus)
	if err != nil {
		return answer.Outcome{}, err
	}
	forgetOldOffers(ctx, kv, s.now())
	question, err := newOfferID()
	if err != nil {
		return answer.Outcome{}, err
	}
	out := answer.Outcome{Host: s.Host, Alerts: len(alerts)}
	var text strings.Builder
	fmt.Fprintf(&text, "Replace %s in pool %s (%s)?\n", leafName(leaf), pool.Name, t.repl.TopVdev)
	for i, c := range qualify[:min(len(qualify), maxOffers)] {
		one := plan // with one usable disk, zwatch replace chose it: its command is there
		if plan.New == nil || plan.New.Device != c.Device || len(plan.Commands) == 0 {
			one = replace.Plan{}
			if err := replace.Run(ctx, s.options(t.repl, c.Device, &one)); err != nil || len(one.Commands) == 0 {
				refused = append(refused, c.Device+": "+errText(err))
				continue
			}
		}
		id := question
		if i > 0 {
			if id, err = newOfferID(); err != nil {
				return answer.Outcome{}, err
			}
		}
		o := Offer{ID: id, Question: question, Host: s.Host, Incident: incident, Pool: pool.Name, Old: t.repl.VdevGUID, OldPath: t.repl.VdevPath, OldName: leafName(leaf),
			New: c.Device, NewAbout: about(c), Command: one.Commands[0].Argv, Expires: s.now().Add(OfferFor).UTC(), State: stateAsked}
		if err := saveOffer(ctx, kv, &o); err != nil {
			return answer.Outcome{}, err
		}
		fmt.Fprintf(&text, "\nWith %s (%s)%s: this erases everything on it. zwatch runs:\n%s\n",
			c.Device, o.NewAbout, warnings(c), one.Commands[0].Shell)
		out.Ask = append(out.Ask, answer.Option{Label: "⚠️ Erase " + shortDisk(c) + " and replace", Action: answer.Action{Verb: answer.Confirm, Incident: id}, Word: shortDisk(c)})
	}
	if len(out.Ask) == 0 {
		return answer.Outcome{Text: noDiskText(pool.Name, plan, refused)}, nil
	}
	fmt.Fprintf(&text, "\nThen it follows the resilver and tells its end. This question is open for %d min.", int(OfferFor.Minutes()))
	out.Ask = append(out.Ask, answer.Option{Label: "Cancel", Action: answer.Action{Verb: answer.Cancel, Incident: question}})
	out.Text = text.String()
	return out, nil
}

// Cancel closes the question: none of its disks is replaced.
func (s *Service) Cancel(ctx context.Context, question, by, source string) (answer.Outcome, error) {
	kv, err := stateKV(ctx, s.Bus)
	if err != nil {
		return answer.Outcome{}, err
	}
	if n := dropQuestion(ctx, kv, question, "", by, source, s.now()); n == 0 {
		return answer.Outcome{}, ErrOfferGone
	}
	return answer.Outcome{Text: "Cancelled: nothing was run."}, nil
}

// Confirm runs the replacement offer id asked about, after checking that
// nothing changed since: the disk still qualifies, the command is the same,
// no scrub or resilver started, the pool is not suspended.
func (s *Service) Confirm(ctx context.Context, id, by, source string) (answer.Outcome, error) {
	kv, err := stateKV(ctx, s.Bus)
	if err != nil {
		return answer.Outcome{}, err
	}
	o, err := takeOffer(ctx, kv, id, stateTaken, by, source, s.now())
	if err != nil {
		return answer.Outcome{}, err
	}
	dropQuestion(ctx, kv, o.Question, o.ID, by, source, s.now())
	repl := alert.Replacement{Pool: o.Pool, VdevGUID: o.Old, VdevPath: o.OldPath}
	if alerts, err := s.Incident(ctx, o.Incident); err == nil {
		if t, why := targetOf(alerts, s.Host, o.Incident); why == "" && t.repl.VdevGUID == o.Old && t.repl.VdevPath == o.OldPath {
			repl = t.repl
		}
	}
	_, _, why, err := s.look(ctx, repl)
	if err != nil || why != "" {
		return answer.Outcome{Text: "Not run: " + why}, err
	}
	var plan replace.Plan
	if err := replace.Run(ctx, s.options(repl, o.New, &plan)); err != nil || len(plan.Commands) == 0 {
		return answer.Outcome{Text: "Not run: " + o.New + " no longer qualifies: " + errText(err)}, nil
	}
	if got := plan.Commands[0].Argv; strings.Join(got, "\x00") != strings.Join(o.Command, "\x00") {
		return answer.Outcome{Text: "Not run: the command would now be " + plan.Commands[0].Shell + ", not the one you confirmed. Tap Replace on the page again."}, nil
	}
	if !s.claim(o.Pool) {
		return answer.Outcome{Text: "Not run: a replacement in pool " + o.Pool + " is running already."}, nil
	}
	if s.Acknowledge != nil {
		if err := s.Acknowledge(ctx, o.Incident, by, source); err != nil && !errors.Is(err, answer.ErrGone) {
			s.log().Warn("replacement: the incident could not be acknowledged", "incident", o.Incident, "err", err)
		}
	}
	progress := make(chan string, 8)
	s.wg.Add(1)
	go s.replace(o, repl, progress)
	return answer.Outcome{Host: s.Host, Text: "Started by " + by + ": " + replace.ShellCommand(o.Command...), Progress: progress}, nil
}

// claim marks pool as having a replacement started here; false when one runs.
func (s *Service) claim(pool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.running = map[string]bool{}
	}
	if s.running[pool] {
		return false
	}
	s.running[pool] = true
	return true
}

// replace runs the confirmed replacement and reports it on progress.
func (s *Service) replace(o Offer, repl alert.Replacement, progress chan<- string) {
	defer s.wg.Done()
	defer close(progress)
	defer func() {
		s.mu.Lock()
		delete(s.running, o.Pool)
		s.mu.Unlock()
	}()
	ctx := s.Background
	if ctx == nil {
		ctx = context.Background()
	}
	log := s.log().With("pool", o.Pool, "old", o.OldName, "new", o.New, "by", o.By, "source", o.Source)
	log.Info("replacement confirmed from a page: running zpool replace", "command", replace.ShellCommand(o.Command...))
	say := func(line string) {
		select {
		case progress <- line:
		default: // the channel is behind: it shows the next line instead
		}
	}
	var last time.Time
	lastPct := -100.0
	opts := s.options(repl, o.New, nil)
	opts.DryRun, opts.Yes = false, true
	opts.Progress = func(sc zfs.Scan) {
		if s.now().Sub(last) < 30*time.Second && sc.PercentDone-lastPct < 10 {
			return
		}
		last, lastPct = s.now(), sc.PercentDone
		say(fmt.Sprintf("Resilvering onto %s: %s", o.New, replace.ScanDetail(sc)))
	}
	start := s.now()
	err := replace.Run(ctx, opts)
	took := s.now().Sub(start).Round(time.Second)
	switch {
	case err != nil && ctx.Err() != nil:
		log.Warn("zwatch stopped while following a replacement's resilver; the resilver goes on", "err", err)
		say(fmt.Sprintf("zwatch stopped following the resilver (it goes on without it): zpool status -v %s", o.Pool))
	case err != nil:
		log.Error("replacement from a page failed", "err", err)
		say(fmt.Sprintf("❌ The replacement did not complete: %s. See zpool status -v %s.", errText(err), o.Pool))
	default:
		log.Info("replacement from a page finished", "took", took)
		say(fmt.Sprintf("✅ Replaced %s with %s: the resilver finished (%s). Next, verify every block: zpool scrub %s", o.OldName, o.New, took, o.Pool))
	}
}

// options are zwatch replace's for repl's device and the new disk
// (none: every candidate is judged), as a dry run filling plan.
func (s *Service) options(repl alert.Replacement, newDisk string, plan *replace.Plan) replace.Options {
	return replace.Options{Pool: repl.Pool, Old: oldArg(repl), New: newDisk, DryRun: true, Plan: plan, Out: io.Discard,
		Runner: s.Runner, Status: s.Status, Disks: s.Disks, Probe: s.Probe, Poll: s.Poll, Now: s.Now}
}

func errText(err error) string {
	if err == nil {
		return "no reason given"
	}
	return strings.TrimPrefix(err.Error(), replace.ErrRefused.Error()+": ")
}

// about is a disk's size, model and serial.
func about(c replace.Candidate) string {
	parts := []string{units.IEC(c.Disk.SizeBytes)}
	if c.Disk.Model != "" {
		parts = append(parts, c.Disk.Model)
	}
	if c.Disk.Serial != "" {
		parts = append(parts, "serial "+c.Disk.Serial)
	}
	return strings.Join(parts, ", ")
}

func warnings(c replace.Candidate) string {
	var ws []string
	for _, w := range c.Warnings {
		ws = append(ws, w.Text)
	}
	if len(ws) == 0 {
		return ""
	}
	return "; note: " + strings.Join(ws, "; ")
}

// shortDisk names a disk on a button: its serial, else its by-id name.
func shortDisk(c replace.Candidate) string {
	if c.Disk.Serial != "" {
		return c.Disk.Serial
	}
	return strings.TrimPrefix(c.Device, "/dev/disk/by-id/")
}

// leafName is a device as people read it: its by-id name without the
// directory (zpool status -j gives whole paths), else its GUID.
func leafName(l *zfs.Vdev) string {
	if l.Name == "" {
		return l.GUID
	}
	return strings.TrimPrefix(strings.TrimPrefix(l.Name, "/dev/disk/by-id/"), "/dev/")
}
