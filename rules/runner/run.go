// Package runner runs the rule engine (package rules) on the bus. It owns
// the durable consumer(s) on the facts stream (ConsumerName, or one per
// partition: Partition, ConsumerFor) and the draining of the unpartitioned
// one; batches of facts, each saved once and then acknowledged; saving the
// engine's state and the stream position of the last fact applied, from
// which a damaged consumer is recreated; the silence feed's wiring
// (silence.Feed: read, applied, expiry notices, stale ones removed); and
// handing the notifications the engine makes to delivery
// (notifiers/delivery), including a canary's answer. How a host's state is
// encoded, saved and loaded stays in package rules (Engine.Load, Write,
// Overwrite: the state is the engine's unexported per-host state); the
// runner decides when.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/recent"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/rules"
)

// ConsumerName is the durable consumer on bus.StreamFacts that rule engines
// share: each fact is evaluated by one engine, and nothing is lost while
// none runs.
const ConsumerName = "rules"

// tickEvery is how often Run looks for due notifications and time-based rules.
const tickEvery = time.Second

// positionKey holds, in bus.StateBucket, the facts stream sequence of the
// last fact the engine applied, from which a damaged consumer is recreated.
const positionKey = "rules.position"

// While a write to the rule state fails, it is tried again this often (not
// at every fact), each try bounded by storageTimeout; the outbox's own
// retries are delivery's (Sender.Flush).
const (
	retryStorageEvery = 5 * time.Second
	storageTimeout    = 3 * time.Second
)

// The position is saved at most savePositionEvery, as the engine saves a
// host's bookkeeping alone about once a minute (rules.Engine.BookkeepingDue):
// at the default intervals a fact arrives every few seconds, and what a
// crash loses of the position is facts applied again, each ignored
// (rules.Engine.ObserveSeq).
const savePositionEvery = time.Minute

// Options are what the daemon adds to Run; every field is optional.
type Options struct {
	// Delivery is where notifications go (notifiers/delivery): each engine
	// sends through a Sender of its own (Path.Sender). Its direct delivery
	// takes over when the outbox does not take a write; while its storage
	// watch says the storage fails, the engine also reads facts as they are
	// published (core NATS), since the facts stream may not store them. It
	// removes a damaged consumer of the engine's and hears of damaged state
	// the engine rewrote. nil: the outbox alone.
	Delivery *delivery.Path
	// Host is the host this engine runs on: notices about no host in
	// particular (a silence that expired) go out on its subject. Default:
	// the host of an alert the notice names, else the machine's hostname.
	Host string
	// Now is the engine's clock (default time.Now); tests move it to see
	// silences expire and repeats fall due.
	Now func() time.Time
	// Partition, on a partitioned facts stream, is the share of the hosts
	// this engine evaluates (fleet.Partitions runs one per partition it
	// holds); nil: every host, from the one consumer ConsumerName.
	Partition *Partition
	// StateKeys, shared by the partition engines of one server, lists the
	// state bucket's keys once for all of them (partition.go).
	StateKeys *StateKeys
	// DrainLegacy makes the engine apply what the consumer ConsumerName
	// still holds from before the stream was partitioned, then remove it
	// and return ErrDrained (partition.go).
	DrainLegacy bool
}

// maxConflicts is how many save conflicts in a row, each after a reload,
// mean the stored entry cannot be read back (its block was damaged: the
// server still counts the key, Get does not find it) rather than another
// engine writing: the engine then overwrites it.
const maxConflicts = 5

// Run evaluates facts from the bus until ctx ends (RunWith without options).
func Run(ctx context.Context, b *bus.Bus, cfg config.RulesConfig, log *slog.Logger) error {
	return RunWith(ctx, b, cfg, Options{}, log)
}

// RunWith evaluates facts from the bus until ctx ends. Messages are acked
// in batches once the state bucket holds their effects (batch.go), and
// notifications go to ZWATCH_ALERTS with their ID as the
// JetStream message ID, so a re-sent one (after a crash between publish and
// save) is dropped as a duplicate. When the storage fails, the engine keeps
// its state in memory and opts.Delivery delivers what is due directly, and
// publishes it to the outbox once that works again.
func RunWith(ctx context.Context, b *bus.Bus, cfg config.RulesConfig, opts Options, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return fmt.Errorf("rules: open state bucket %s: %w", bus.StateBucket, err)
	}
	e := rules.NewEngine(cfg, log)
	if p := opts.Partition; p != nil {
		e.SetHostFilter(p.owns)
		log = log.With("partition", p.Index)
	}
	if err := load(ctx, e, kv, opts.StateKeys); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	// The same facts as they are published, for when the facts stream
	// cannot store them; read only while delivery is not durable.
	core := make(chan *nats.Msg, 256)
	if opts.Delivery.WatchesStorage() && opts.Partition == nil && !opts.DrainLegacy {
		for _, subj := range facts.StreamSubjects() {
			sub, err := b.NC.ChanSubscribe(subj, core)
			if err != nil {
				return fmt.Errorf("rules: subscribe to %s: %w", subj, err)
			}
			defer func() { _ = sub.Unsubscribe() }()
		}
	}
	r := &runner{e: e, b: b, kv: kv, log: log, opts: opts, seen: recent.New[uint64](4096), seed: maphash.MakeSeed(), core: core,
		out: opts.Delivery.Sender(b, log)}
	e.SetBeforeFlush(r.beforeFlush(ctx))
	r.readSilences(ctx, true)
	for {
		// A consumer lost while the engine runs (JetStream reloaded after
		// a storage failure) is opened again; the state in memory stays.
		err := r.consume(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errOpen) || errors.Is(err, ErrDrained) {
			return err
		}
		log.Warn("rules: fact consumer lost; opening it again", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// errOpen marks a consumer that could not be opened at all.
var errOpen = errors.New("rules: cannot open the fact consumer")

// consume applies facts from the engine's consumer until ctx ends or the
// consumer is lost.
func (r *runner) consume(ctx context.Context) error {
	cons, err := openConsumer(ctx, r.b, r.kv, r.opts, r.log)
	if err != nil {
		return fmt.Errorf("%w: %w", errOpen, err)
	}
	// The sequences of the facts stream count in this stream (position.go);
	// a reloaded or recreated stream is looked up again.
	if r.stream, err = streamID(ctx, r.b.JS); err != nil {
		return fmt.Errorf("%w: %w", errOpen, err)
	}
	msgs, err := cons.Messages(jetstream.PullMaxMessages(64), jetstream.PullExpiry(10*time.Second), jetstream.PullHeartbeat(2*time.Second))
	if err != nil {
		return fmt.Errorf("%w: consume %s: %w", errOpen, bus.StreamFacts, err)
	}
	ch, stopped, giveBack := pump(msgs)
	defer giveBack()
	r.log.Info("rule engine running", "consumer", r.consumerName(), "stream", bus.StreamFacts)
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	// The open batch is committed when it is full or saveEvery old,
	// whichever comes first, and once more on the way out.
	batchDue := time.NewTimer(saveEvery)
	batchDue.Stop()
	defer batchDue.Stop()
	defer r.commitOnExit(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				select {
				case err := <-stopped:
					return fmt.Errorf("rules: fact consumer stopped: %w", err)
				default:
					return errors.New("rules: fact consumer closed")
				}
			}
			r.handle(ctx, m)
			switch n := len(r.batch); {
			case len(r.dueHosts) > 0 && (len(ch) == 0 || n >= batchMax):
				r.dueNow(ctx)
			case n >= batchMax:
				r.commit(ctx)
			case n == 1:
				batchDue.Reset(saveEvery)
			}
		case <-batchDue.C:
			if len(r.dueHosts) > 0 {
				r.dueNow(ctx)
			} else if len(r.batch) > 0 {
				r.commit(ctx)
			}
		case m := <-r.core:
			r.handleCore(ctx, m)
		case <-t.C:
			if len(r.dueHosts) > 0 {
				r.dueNow(ctx) // its batch is saved before its pages go out
			} else {
				r.tick(ctx, r.now())
			}
			if r.opts.DrainLegacy && r.drained(ctx, cons) {
				return ErrDrained
			}
		}
	}
}

type runner struct {
	e    *rules.Engine
	b    *bus.Bus
	kv   jetstream.KeyValue
	log  *slog.Logger
	opts Options
	core chan *nats.Msg
	// seen holds the facts applied lately (a hash of the raw message), so
	// one that arrives both published and from the stream counts once.
	seen *recent.Set[uint64]
	seed maphash.Seed
	// pending are notifications made due by this tick, handed to out at
	// its flush; out holds them until the outbox takes them.
	pending []pendingNote
	out     delivery.Sender
	// stateDown: when a state write last failed; zero while it works.
	stateDown time.Time
	// lastSeq is the stream sequence of the last fact applied; savedSeq
	// what positionKey holds.
	lastSeq, savedSeq uint64
	posAt             time.Time
	// flushTouched makes the next save write every host's bookkeeping,
	// due or not (the engine is stopping).
	flushTouched bool
	// stream identifies the facts stream the sequences count in.
	stream string
	// conflicts counts save conflicts in a row (maxConflicts); overwrite
	// is set once they meant a damaged entry.
	conflicts int
	overwrite bool
	// sil: the silences as last read (silence.go).
	sil silences
	// batch holds the facts applied but not yet acknowledged: their
	// effects are saved together, then they are acked (batch.go).
	batch []heldFact
	// dueHosts are the hosts (subject tokens) whose facts in the open
	// batch made a page due (markDue).
	dueHosts map[string]struct{}
}

// now is the engine's clock.
func (r *runner) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now()
	}
	return time.Now()
}

type pendingNote struct {
	n alert.Notification
	// silence is the ID of the silence whose expiry notice n is.
	silence string
}

// flush hands this tick's notifications to the delivery queue, behind
// those still waiting, and has it publish them in order; a silence's
// expiry notice is recorded as sent once the outbox took it.
func (r *runner) flush(ctx context.Context) {
	for _, p := range r.pending {
		var taken func(context.Context)
		if id := p.silence; id != "" {
			taken = func(ctx context.Context) { r.noticed(ctx, id, r.now()) }
		}
		r.out.Put(p.n, taken)
	}
	clear(r.pending)
	r.pending = r.pending[:0]
	r.out.Flush(ctx)
}

func (r *runner) handle(ctx context.Context, m jetstream.Msg) {
	sum := maphash.Bytes(r.seed, m.Data())
	if r.seen.Has(sum) {
		_ = m.Ack() // applied already, as it was published
		return
	}
	r.sendDueBefore(ctx, m.Subject())
	host, ok := r.observe(ctx, m.Subject(), m.Data(), positionOf(m, r.stream))
	if !ok {
		_ = m.Term()
		return
	}
	// Acked once the batch's state is saved (commit); what it makes due
	// and a canary's answer go out now, not after the batch.
	r.hold(m, sum)
	if id := m.Headers().Get(delivery.CanaryHeader); id != "" {
		r.out.Answer(ctx, host, id)
	}
	r.markDue(host)
}

// handleCore applies a fact as it was published, while the storage fails.
func (r *runner) handleCore(ctx context.Context, m *nats.Msg) {
	if r.out.Durable() {
		return // the stream delivers it
	}
	sum := maphash.Bytes(r.seed, m.Data)
	if r.seen.Has(sum) || r.holds(sum) {
		return
	}
	host, ok := r.observe(ctx, m.Subject, m.Data, rules.Position{})
	if !ok {
		return
	}
	r.seen.Add(sum)
	r.commit(ctx)
	if r.markDue(host); len(r.dueHosts) > 0 {
		r.dueNow(ctx)
	}
}

// observe applies one fact, read from the facts stream at pos (zero for a
// fact taken as published: it has no place in the stream yet); false means
// it can never be applied.
func (r *runner) observe(ctx context.Context, subject string, data []byte, pos rules.Position) (string, bool) {
	var env bus.Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		r.log.Warn("rules: dropping unreadable message", "subject", subject, "err", err)
		return "", false
	}
	// NATS permissions bind an agent to its own subjects; the host inside
	// the message must be that same host, or one agent could speak for
	// another.
	if host, ok := bus.HostOf(subject); !ok || bus.Token(env.Host) != host {
		r.log.Warn("rules: dropping message whose host does not match its subject", "subject", subject, "host", env.Host)
		return "", false
	}
	start := time.Now()
	if r.log.Enabled(ctx, slog.LevelDebug) {
		// With the collectors' lines, the timeline of a fault: how old the
		// fact was when it arrived, and how long it took to evaluate.
		defer func() {
			r.log.Debug("fact", "subject", subject, "age", start.Sub(env.CollectedAt).Round(time.Millisecond), "took", time.Since(start).Round(time.Millisecond))
		}()
	}
	if err := r.e.ObserveSeq(env, pos, r.now()); err != nil {
		// A message that cannot be read now never will be.
		r.log.Warn("rules: dropping message", "subject", subject, "err", err)
		return "", false
	}
	return env.Host, true
}

func (r *runner) tick(ctx context.Context, now time.Time) {
	r.sil.NewTick()
	r.readSilences(ctx, false)
	if r.global() {
		r.queueExpiryNotices(now)
	}
	for _, n := range r.e.Tick(now) {
		r.pending = append(r.pending, pendingNote{n: n})
	}
	// The outbox and the store are retried on the wall clock, whatever
	// the engine's clock says.
	wall := time.Now()
	r.flush(ctx)
	r.commit(ctx)
	r.savePosition(ctx, wall)
}

// save writes the changed state and reports whether another engine changed
// it first. A failing store is retried every retryStorageEvery while the
// state stays in memory. Nothing is saved while notifications wait for the
// outbox: after a crash the saved state still has them due.
func (r *runner) save(ctx context.Context) (conflict bool) {
	// A host whose bookkeeping alone changed is written once its own
	// period has passed (rules.Engine.BookkeepingDue); until then only hosts
	// whose rules changed something are.
	now := time.Now()
	bookkeeping := r.flushTouched || r.e.BookkeepingDue(now)
	if len(r.pending) > 0 || r.out.Waiting() > 0 || !(bookkeeping || r.e.Unsaved()) || (!r.stateDown.IsZero() && time.Since(r.stateDown) < retryStorageEvery) {
		return false
	}
	sctx, cancel := context.WithTimeout(ctx, storageTimeout)
	err := r.e.Write(sctx, r.kv, r.overwrite, !r.flushTouched, now)
	cancel()
	if err != nil && ctx.Err() != nil {
		// Cut off by the engine's stop (the server stops, or hands the
		// partition over), not refused by the store: commitOnExit writes
		// it once more on a context of its own. Reported, it would count
		// as a failing store on a server that may go on running.
		return false
	}
	if errors.Is(err, rules.ErrStateConflict) {
		if r.conflicts++; r.conflicts < maxConflicts {
			return true
		}
		// From now on this engine writes its state unconditionally: the
		// damaged entry's revision never matches again.
		r.overwrite = true
		what := fmt.Sprintf("the rule state could not be read back after %d tries (its store was damaged); it is written again from memory: alerts sent before may be sent once more", maxConflicts)
		r.log.Error("rules: " + what)
		r.opts.Delivery.Damaged(what)
		fctx, cancel := context.WithTimeout(ctx, storageTimeout)
		err = r.e.Overwrite(fctx, r.kv)
		cancel()
	}
	r.conflicts = 0
	r.report("state", err)
	switch {
	case err != nil:
		if r.stateDown.IsZero() {
			r.log.Error("rules: rule state not saved; evaluating in memory and retrying", "every", retryStorageEvery, "err", err)
		}
		r.stateDown = time.Now()
	case !r.stateDown.IsZero():
		r.log.Info("rules: rule state saved again")
		r.stateDown = time.Time{}
	}
	return false
}

// savePosition records the last fact applied, a few times a minute.
func (r *runner) savePosition(ctx context.Context, now time.Time) {
	if r.lastSeq == r.savedSeq || !r.stateDown.IsZero() || now.Sub(r.posAt) < savePositionEvery {
		return
	}
	r.posAt = now
	sctx, cancel := context.WithTimeout(ctx, storageTimeout)
	defer cancel()
	if _, err := r.kv.Put(sctx, r.positionKey(), []byte(strconv.FormatUint(r.lastSeq, 10))); err != nil {
		r.report("state", err)
		return
	}
	r.savedSeq = r.lastSeq
}

func (r *runner) report(part string, err error) { r.out.Report(part, err) }

func (r *runner) reload(ctx context.Context) {
	if err := r.e.Load(ctx, r.kv); err != nil {
		r.log.Error("rules: reload state", "err", err)
	}
}
