package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
)

// maxPending is how many stored points may wait for the bus's ack.
const maxPending = 1024

// ackWait bounds the wait for the bus to ack what the writer stored.
const ackWait = 10 * time.Second

// writer turns facts into points and events. One goroutine owns it.
type writer struct {
	s        *Store
	log      *slog.Logger
	interval int64 // raw_interval in seconds
	// sources are the per-source accumulators, by host and source.
	sources map[string]*sourceState
	// gates are the raw slot last taken per fact subject: a fact in a
	// slot already taken is skipped before its data is decoded.
	gates map[string]int64
	// reads are the kinds of fact the writer reads (factHandlers).
	reads   *facts.Handlers[factIn]
	scans   scanDedupe
	alerts  alertDedupe
	pending []jetstream.PubAckFuture
	// lost counts points and events the bus refused since the last warning.
	lost    int
	lostErr error
}

// sourceState is one source's open hour and day.
type sourceState struct {
	host, source string
	lastSlot     int64
	// latest are the newest values by fact kind: a pool's point joins
	// its capacity and its error counters.
	latest map[string]map[string]float64
	// waitedCapacity: a pool's status came before any capacity once; the
	// next one is stored without waiting.
	waitedCapacity    bool
	hour, day         period
	hourDone, dayDone int64 // newest aggregate stored (period start)
}

func newWriter(s *Store) *writer {
	return &writer{
		s: s, log: s.log, interval: int64(s.cfg.RawInterval.D() / time.Second),
		sources: map[string]*sourceState{}, gates: map[string]int64{},
		reads: factHandlers(), scans: newScanDedupe(), alerts: newAlertDedupe(),
	}
}

// factSubjects are the facts the history reads.
func factSubjects() []string {
	var out []string
	for _, k := range factHandlers().Kinds() {
		out = append(out, k.Filter("*"))
	}
	return out
}

// factIn is one fact the writer takes in: the handlers' context.
type factIn struct {
	w         *writer
	ctx       context.Context
	subject   string
	hostToken string
}

// factHandlers are the kinds of fact the history reads and what it keeps
// of each. A SMART report is read only in the part the series need.
func factHandlers() *facts.Handlers[factIn] {
	var hs facts.Handlers[factIn]
	facts.On(&hs, facts.ZpoolCapacity, capacityFact)
	facts.On(&hs, facts.ZpoolStatus, statusFact)
	facts.OnPart(&hs, facts.Smart, smartFact)
	facts.On(&hs, facts.IncidentAction, actionFact)
	return &hs
}

// ingest takes one message of the facts or the alerts stream.
func (w *writer) ingest(ctx context.Context, subject string, data []byte) {
	if isAlertSubject(subject) {
		w.notification(ctx, subject, data)
		return
	}
	h, hostToken, ok := w.reads.ForSubject(subject)
	if !ok {
		return
	}
	if t, ok := peekCollectedAt(data); ok && t.Unix()/w.interval <= w.gates[subject] {
		return
	}
	if err := h.HandleMsg(factIn{w: w, ctx: ctx, subject: subject, hostToken: hostToken}, data); err != nil {
		w.log.Debug("history skips a fact it cannot read", "subject", subject, "err", err)
	}
}

// isAlertSubject: zwatch.v1.<host>.alert, not a fact whose target token
// happens to be "alert" (a disk of that serial).
func isAlertSubject(subject string) bool {
	return strings.Count(subject, ".") == 3 && strings.HasSuffix(subject, "."+bus.KindAlert)
}

// admit takes the raw slot of a fact's subject and checks the fact is
// about the host its subject names; false: the fact is skipped.
func (in factIn) admit(env bus.Envelope) bool {
	w := in.w
	slot := env.CollectedAt.Unix() / w.interval
	if slot <= w.gates[in.subject] {
		return false
	}
	w.gates[in.subject] = slot
	if bus.Token(env.Host) != in.hostToken {
		w.log.Debug("history skips a fact whose host is not its subject's", "subject", in.subject, "host", env.Host)
		return false
	}
	return true
}

// actionFact records an answer to an incident; not sampled: each counts.
func actionFact(in factIn, env bus.Envelope, d *facts.IncidentActionData) error {
	if bus.Token(env.Host) != in.hostToken {
		return nil
	}
	in.w.actionEvent(in.ctx, env, d)
	return nil
}

func capacityFact(in factIn, env bus.Envelope, d *facts.CapacityData) error {
	if !in.admit(env) {
		return nil
	}
	t := env.CollectedAt.Unix()
	for _, p := range d.Pools {
		if p.Name == "" {
			continue
		}
		in.w.sample(in.ctx, env.Host, Source(SourcePool, p.Name), facts.ZpoolCapacity.Name(), t, capacityValues(p))
	}
	return nil
}

func statusFact(in factIn, env bus.Envelope, d *facts.StatusData) error {
	if !in.admit(env) {
		return nil
	}
	t := env.CollectedAt.Unix()
	for _, p := range d.Pools {
		if p == nil || p.Name == "" {
			continue
		}
		in.w.scanEvent(in.ctx, env.Host, p)
		in.w.sample(in.ctx, env.Host, Source(SourcePool, p.Name), facts.ZpoolStatus.Name(), t, statusValues(p))
	}
	return nil
}

func smartFact(in factIn, env bus.Envelope, r *smartReading) error {
	if !in.admit(env) {
		return nil
	}
	if v := diskValues(r); r.Serial != "" && len(v) > 0 {
		in.w.sample(in.ctx, env.Host, Source(SourceDisk, r.Serial), facts.Smart.Name(), env.CollectedAt.Unix(), v)
	}
	return nil
}

// peekCollectedAt finds an envelope's collected_at without decoding its
// data, so that the many facts between two raw slots cost little. The
// envelope's fields come in a fixed order; anything else is decoded.
func peekCollectedAt(data []byte) (time.Time, bool) {
	const key = `"collected_at":"`
	head := data[:min(len(data), 512)]
	i := bytes.Index(head, []byte(key))
	if i < 0 {
		return time.Time{}, false
	}
	rest := head[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:j]))
	return t, err == nil
}

// sample takes one source's values of one fact kind at t (Unix seconds)
// and stores a raw point when t opens a new raw slot for the source.
func (w *writer) sample(ctx context.Context, host, source, kind string, t int64, values map[string]float64) {
	st, err := w.source(ctx, host, source)
	if err != nil {
		w.log.Warn("history cannot read what it stored for a source; its point is skipped", "host", host, "source", source, "err", err)
		return
	}
	st.latest[kind] = values
	slot := t / w.interval
	if slot <= st.lastSlot {
		return
	}
	// A pool's point joins its capacity (zpool list, every 10 s) and its
	// errors (zpool status, every minute): a status that comes first after
	// a start leaves the slot to the capacity just behind it, once.
	if kind == facts.ZpoolStatus.Name() && st.latest[facts.ZpoolCapacity.Name()] == nil && !st.waitedCapacity {
		st.waitedCapacity = true
		return
	}
	st.lastSlot = slot
	merged := make(map[string]float64)
	for _, vals := range st.latest {
		for k, v := range vals {
			merged[k] = v
		}
	}
	// Aggregates of the periods t closes go first: after a crash between
	// the two writes, the rebuild sees the aggregate and never doubles it.
	w.closePeriod(ctx, st, &st.hour, &st.hourDone, TierHour, t)
	w.closePeriod(ctx, st, &st.day, &st.dayDone, TierDay, t)
	w.store(ctx, st, TierRaw, point{Host: host, Source: source, T: t, Values: merged})
	st.hour.add(merged)
	st.day.add(merged)
}

// closePeriod stores the aggregate of a period that t has left behind and
// opens t's period.
func (w *writer) closePeriod(ctx context.Context, st *sourceState, p *period, done *int64, tier string, t int64) {
	secs := int64(tierPeriod[tier])
	start := periodStart(t, secs)
	if p.start == start {
		return
	}
	if !p.empty() && p.start > *done {
		w.store(ctx, st, tier, point{Host: st.host, Source: st.source, T: p.start, Period: int32(secs), Aggs: p.aggs()})
		*done = p.start
	}
	p.reset(start)
}

func (w *writer) store(ctx context.Context, st *sourceState, tier string, p point) {
	subject, err := pointSubject(st.host, tier, st.source)
	if err == nil {
		var data []byte
		if data, err = encodePoint(p); err == nil {
			w.publish(ctx, subject, data)
			return
		}
	}
	w.log.Warn("history point not stored", "host", st.host, "source", st.source, "tier", tier, "err", err)
}

// publish stores a message without waiting for its ack; flush waits.
func (w *writer) publish(ctx context.Context, subject string, data []byte) {
	f, err := w.s.js.PublishAsync(subject, data)
	if err != nil {
		w.lost++
		w.lostErr = err
		return
	}
	w.pending = append(w.pending, f)
	if len(w.pending) >= maxPending {
		w.flush(ctx)
	}
}

// flush waits for the acks of what was stored and warns once about what
// the bus refused.
func (w *writer) flush(ctx context.Context) {
	timeout := time.NewTimer(ackWait)
	defer timeout.Stop()
	for _, f := range w.pending {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			w.lost++
			w.lostErr = err
		case <-timeout.C:
			w.lost++
			w.lostErr = fmt.Errorf("no ack from the bus within %s", ackWait)
		case <-ctx.Done():
			w.pending = w.pending[:0]
			return
		}
	}
	w.pending = w.pending[:0]
	if w.lost > 0 {
		w.log.Warn("history points or events not stored", "count", w.lost, "err", w.lostErr)
		w.lost, w.lostErr = 0, nil
	}
}

// source is a source's state, rebuilt from the store the first time the
// source is seen: its last raw slot, its open hour and day from the raw
// points stored in them, and its newest aggregates.
func (w *writer) source(ctx context.Context, host, source string) (*sourceState, error) {
	key := host + "\x00" + source
	if st := w.sources[key]; st != nil {
		return st, nil
	}
	st := &sourceState{host: host, source: source, latest: map[string]map[string]float64{}}
	if err := w.rebuild(ctx, st); err != nil {
		return nil, err
	}
	w.sources[key] = st
	return st, nil
}

func (w *writer) rebuild(ctx context.Context, st *sourceState) error {
	for _, tier := range []string{TierHour, TierDay} {
		p, err := w.lastPoint(ctx, st, tier)
		if err != nil {
			return err
		}
		if p != nil {
			if tier == TierHour {
				st.hourDone = p.T
			} else {
				st.dayDone = p.T
			}
		}
	}
	subject, err := pointSubject(st.host, TierRaw, st.source)
	if err != nil {
		return err
	}
	last, err := lastMsg(ctx, w.s.js, StreamRaw, subject)
	if err != nil || last == nil {
		return err
	}
	// The open day began at most a day before the newest raw point; read
	// from a little earlier by the store's clock, and pick by the points'.
	var raws []point
	err = readMsgs(ctx, w.s.js, StreamRaw, []string{subject}, last.Time.Add(-50*time.Hour), int(perSubject(w.s.cfg, TierRaw)), func(m jetstream.Msg) error {
		if p, err := decodePoint(m.Data()); err == nil && p.Host == st.host && p.Source == st.source {
			raws = append(raws, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errReadLimit) {
		return err
	}
	if len(raws) == 0 {
		return nil
	}
	newest := raws[len(raws)-1].T
	st.lastSlot = newest / w.interval
	st.hour.reset(periodStart(newest, 3600))
	st.day.reset(periodStart(newest, 86400))
	for _, p := range raws {
		if p.T >= st.day.start {
			st.day.add(p.Values)
		}
		if p.T >= st.hour.start {
			st.hour.add(p.Values)
		}
	}
	return nil
}

// lastPoint is the newest point of a source in a tier, nil when none (or
// when the newest on its subject is another source's of the same token).
func (w *writer) lastPoint(ctx context.Context, st *sourceState, tier string) (*point, error) {
	subject, err := pointSubject(st.host, tier, st.source)
	if err != nil {
		return nil, err
	}
	m, err := lastMsg(ctx, w.s.js, tierStream[tier], subject)
	if err != nil || m == nil {
		return nil, err
	}
	p, err := decodePoint(m.Data)
	if err != nil || p.Host != st.host || p.Source != st.source {
		return nil, nil
	}
	return &p, nil
}
