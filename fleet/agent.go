package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
)

// DefaultBuffer is how many messages an agent keeps while the cluster is
// unreachable: at the default poll rates (about 0.2 messages/s for a host
// with 12 disks) that is more than 12 hours.
const DefaultBuffer = 10000

// BufferStats is the agent's publish buffer, as sent in every heartbeat
// (field "buffer" of zwatch.v1.<host>.heartbeat).
type BufferStats = facts.BufferStats

type queued struct {
	subject string
	data    []byte
	id      string
}

// Buffer is a collectors.Publisher for agents. Publish only queues the
// enveloped message (never blocks a collector); Run sends the queue in order
// through JetStream, waiting for each acknowledgement and retrying while the
// cluster is unreachable. The queue holds at most Max messages; when it is
// full the oldest is dropped and counted. Every message carries a
// Nats-Msg-Id, so one re-sent after a lost acknowledgement is stored once.
type Buffer struct {
	js   jetstream.JetStream
	nc   *nats.Conn
	host string
	max  int
	log  *slog.Logger
	// Now is the clock for envelopes; default time.Now.
	Now func() time.Time
	// Timeout bounds one publish attempt; default 5s.
	Timeout time.Duration

	mu      sync.Mutex
	q       []queued
	seq     uint64
	boot    string
	dropped uint64
	sent    uint64
	retries uint64
	wake    chan struct{}
}

// NewBuffer returns an agent publisher for host on b's connection, holding
// at most max messages (DefaultBuffer if max <= 0).
func NewBuffer(b *bus.Bus, host string, max int, log *slog.Logger) *Buffer {
	if max <= 0 {
		max = DefaultBuffer
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Buffer{
		js: b.JS, nc: b.NC, host: host, max: max, log: log,
		boot: strconv.FormatInt(time.Now().UnixNano(), 36),
		wake: make(chan struct{}, 1),
	}
}

// Stats returns the buffer's counters.
func (p *Buffer) Stats() BufferStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return BufferStats{Queued: len(p.q), Max: p.max, Dropped: p.dropped, Sent: p.sent, Retries: p.retries}
}

// Publish wraps data in the envelope and queues it for
// zwatch.v1.<host>.<kind>[.extra]. A heartbeat gets the buffer's counters.
func (p *Buffer) Publish(ctx context.Context, kind, collector string, data any, extra ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if hb, ok := data.(facts.HeartbeatData); ok && kind == facts.Heartbeat.Name() {
		stats := p.Stats()
		hb.Buffer = &stats
		data = hb
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	msg, err := bus.Wrap(kind, p.host, collector, now(), data)
	if err != nil {
		return err
	}
	p.enqueue(bus.Subject(p.host, kind, extra...), msg)
	return nil
}

func (p *Buffer) enqueue(subject string, data []byte) {
	p.mu.Lock()
	p.seq++
	item := queued{subject: subject, data: data, id: p.host + "-" + p.boot + "-" + strconv.FormatUint(p.seq, 36)}
	if len(p.q) >= p.max {
		// Drop-oldest: the newest facts describe the machine now.
		n := len(p.q) - p.max + 1
		p.dropped += uint64(n)
		clear(p.q[:n])
		p.q = p.q[n:]
		if p.dropped == uint64(n) || p.dropped%1000 < uint64(n) {
			p.log.Warn("agent buffer full: dropping the oldest messages", "max", p.max, "dropped_total", p.dropped)
		}
	}
	p.q = append(p.q, item)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Wake makes Run retry at once (call it when the connection is back).
func (p *Buffer) Wake() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *Buffer) head() (queued, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.q) == 0 {
		return queued{}, false
	}
	return p.q[0], true
}

// done removes the head if it is still item (a drop may have removed it).
func (p *Buffer) done(item queued) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent++
	if len(p.q) > 0 && p.q[0].id == item.id {
		p.q[0] = queued{}
		p.q = p.q[1:]
	}
}

// Run sends queued messages until ctx ends, then tries for up to flushFor
// (5s) to send what is left.
func (p *Buffer) Run(ctx context.Context) error {
	backoff := 250 * time.Millisecond
	for {
		item, ok := p.head()
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-p.wake:
				continue
			}
		}
		if ctx.Err() != nil {
			return p.flush(5 * time.Second)
		}
		if err := p.send(ctx, item); err != nil {
			p.mu.Lock()
			p.retries++
			r := p.retries
			p.mu.Unlock()
			if r == 1 || r%100 == 0 {
				p.log.Warn("agent cannot publish; buffering", "queued", p.Stats().Queued, "err", err, "retry_in", backoff)
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
			case <-p.wake:
			case <-t.C:
			}
			t.Stop()
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 250 * time.Millisecond
		p.done(item)
	}
}

func (p *Buffer) send(ctx context.Context, item queued) error {
	if p.nc != nil && !p.nc.IsConnected() {
		return errors.New("not connected to NATS")
	}
	to := p.Timeout
	if to <= 0 {
		to = 5 * time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	m := nats.NewMsg(item.subject)
	m.Data = item.data
	m.Header.Set(jetstream.MsgIDHeader, item.id)
	if _, err := p.js.PublishMsg(pctx, m); err != nil {
		return fmt.Errorf("publish %s: %w", item.subject, err)
	}
	return nil
}

// flush sends what it can within d after shutdown began.
func (p *Buffer) flush(d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		item, ok := p.head()
		if !ok {
			return nil
		}
		if err := p.send(ctx, item); err != nil {
			if n := p.Stats().Queued; n > 0 {
				p.log.Warn("agent stopping with unsent messages", "queued", n, "err", err)
			}
			return nil
		}
		p.done(item)
	}
}
