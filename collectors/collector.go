// Package collectors gathers facts from one source each (zpool list, zpool
// status, zpool events, arcstats, smartctl) and publishes them as typed,
// versioned messages on the bus. Like node_exporter's collectors, each is
// one small file, parses through an io.Reader, treats "not available here"
// as a state to report once, not a failure, and is listed once, in Table.
package collectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
)

// Publisher puts one message of a kind on the bus for this host.
type Publisher interface {
	Publish(ctx context.Context, kind, collector string, data any, subjectExtra ...string) error
}

// BusPublisher publishes enveloped messages through NATS JetStream.
type BusPublisher struct {
	Bus  *bus.Bus
	Host string
	Now  func() time.Time
}

// Publish wraps data in the envelope and publishes it on zwatch.v1.<host>.<kind>[.extra].
func (p *BusPublisher) Publish(ctx context.Context, kind, collector string, data any, extra ...string) error {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	msg, err := bus.Wrap(kind, p.Host, collector, now(), data)
	if err != nil {
		return err
	}
	return p.Bus.Publish(ctx, bus.Subject(p.Host, kind, extra...), msg)
}

// Runner runs one tool with an explicit argv under the context's deadline.
// *execx.Runner implements it; tests of other packages pass fakes.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (execx.Result, error)
}

// Collector is one source polled on an interval. Each collector splits in
// two: a Read that runs its tool and parses the output into a payload, which
// `zwatch status`, `zwatch disks`, `zwatch replace` and maintenance call
// directly, and a Collect that publishes what Read returned (PublishRead).
type Collector interface {
	// Name is the collector's name in envelopes and logs, e.g. "zpool_status".
	Name() string
	// Collect reads the source once and publishes what it found. An error it
	// returns is published as a collector.error by the scheduler.
	Collect(ctx context.Context, pub Publisher) error
}

// Follower is a source that streams instead of being polled (zpool events
// -f): Run publishes what comes until ctx ends or the stream breaks, and the
// daemon restarts it with backoff.
// TargetCollector is a poll collector that can also read one target at
// once when another collector asks (Env.Urgent): the SMART collector reads
// the one disk the kernel log or ZFS just named. target is a device path,
// a kernel name (sdb, nvme0n1) or a /dev/disk/by-id name.
type TargetCollector interface {
	Collector
	CollectTarget(ctx context.Context, pub Publisher, target string) error
}

type Follower interface {
	Name() string
	Run(ctx context.Context, pub Publisher) error
}

// Opener is a Follower that says when its stream is open. From then on a
// quiet stream counts as working: a healthy kernel log says nothing for
// weeks, and that is not a blind spot.
type Opener interface {
	Follower
	// OnOpen sets the function Run calls each time the stream opens.
	OnOpen(func(at time.Time))
}

// PublishRead is the Collect of a collector that reads one payload per poll:
// it publishes what read returned as one fact of kind, and publishes nothing
// when read fails. read must return the payload kind declares.
func PublishRead[T any](ctx context.Context, pub Publisher, kind facts.KindOf[T], collector string, read func(context.Context) (T, error)) error {
	data, err := read(ctx)
	if err != nil {
		return err
	}
	return Publish(ctx, pub, kind, collector, data)
}

// Publish publishes data as one fact of kind; target names what the fact
// is about for a per-target kind (a disk's serial). data must be the
// payload kind declares, so a collector cannot publish one kind's payload
// under another's name.
func Publish[T any](ctx context.Context, pub Publisher, kind facts.KindOf[T], collector string, data T, target ...string) error {
	return pub.Publish(ctx, kind.Name(), collector, data, target...)
}

// ErrorFor turns an error from a collector into a CollectorError, with a fix
// for the kinds a person can act on.
func ErrorFor(collector, target string, err error) facts.CollectorErrorData {
	ce := facts.CollectorErrorData{Collector: collector, Target: target, Message: err.Error()}
	var ee *execx.Error
	if errors.As(err, &ee) {
		ce.Kind = ee.Kind
		ce.Command = ee.Command
		switch ee.Kind {
		case execx.KindTimeout, execx.KindBusy:
			ce.Fix = "the command hangs: a pool may be SUSPENDED or a controller dead; check `zpool status` and `dmesg` on the machine"
		case execx.KindMissing:
			ce.Fix = "install the tool (zfsutils-linux for zpool/zfs, smartmontools for smartctl) or set its path in the config"
		case execx.KindDenied:
			ce.Fix = "run zwatch as root, or grant the capabilities in configs/zwatch.service"
		}
		return ce
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		ce.Kind = facts.KindParse
		ce.Fix = "zwatch could not read this output; please report it with the output attached"
		return ce
	}
	ce.Kind = execx.KindFailed
	return ce
}

// ParseError marks output that ran fine but could not be understood.
type ParseError struct {
	Source string
	Err    error
}

func (e *ParseError) Error() string { return fmt.Sprintf("parse %s: %v", e.Source, e.Err) }
func (e *ParseError) Unwrap() error { return e.Err }

// Loop runs c every interval until ctx ends, publishing its errors. Trigger,
// when non-nil, asks for an immediate run (debounced by the caller). log
// already names the collector (the daemon gives each its own): its lines
// do not say it again.
func Loop(ctx context.Context, c Collector, pub Publisher, interval time.Duration, trigger <-chan struct{}, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	saidUnavailable := false
	why := "start"
	for {
		start := time.Now()
		err := c.Collect(ctx, pub)
		// The timeline of a fault (event -> poll -> rule -> page) is read
		// from these lines at debug level.
		log.Debug("collected", "why", why, "took", time.Since(start).Round(time.Millisecond), "ok", err == nil)
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, ErrNotAvailable):
			// A source this machine does not have is said once, not paged.
			if !saidUnavailable {
				log.Info("source not available on this machine; the collector keeps checking", "err", err)
				saidUnavailable = true
			}
		default:
			log.Warn("collector failed", "err", err)
			ce := ErrorFor(c.Name(), "", err)
			if perr := Publish(ctx, pub, facts.CollectorError, c.Name(), ce); perr != nil && ctx.Err() == nil {
				log.Error("publish collector error", "err", perr)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			why = "interval"
		case <-trigger:
			why = "event"
		}
	}
}
