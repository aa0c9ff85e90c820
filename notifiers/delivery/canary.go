package delivery

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
)

// CanaryHeader carries the ID of a health canary on a heartbeat fact. The
// rule engine answers each with a notification whose ID is CanaryPrefix+ID
// and which holds no alert (Sender.Answer): channels skip it, and the
// canary's sink learns that collector → bus → rules → outbox works.
const (
	CanaryHeader = "Zwatch-Canary"
	CanaryPrefix = "canary-"
)

// Canary proves the whole pipeline works: each heartbeat fact carries a
// canary ID (CanaryHeader); the rule engine answers it with an empty
// notification in the outbox (channels skip it: it holds no alert), and the
// sink here, a consumer of the outbox, sees it arrive. Only then is zwatch
// healthy to systemd and heartbeat.url (Check).
type Canary struct {
	b    *bus.Bus
	host string
	log  *slog.Logger
	// storage, when set, hears of each heartbeat's publish and says first
	// what is wrong with the storage (Service.Canary).
	storage *storageWatch

	// created is before any canary is sent: the sink reads the outbox from
	// then (less a margin for the servers' clocks), so an answer published
	// before the sink's consumer exists is still seen.
	created time.Time

	mu      sync.Mutex
	n       uint64
	arrived map[string]chan struct{} // canaries in flight
}

// NewCanary returns the canary of host's heartbeats on b; run its Sink.
func NewCanary(b *bus.Bus, host string, log *slog.Logger) *Canary {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Canary{b: b, host: host, log: log, arrived: map[string]chan struct{}{}, created: time.Now()}
}

// sinkSkew is how far before created the sink starts reading: the
// outbox's timestamps are the NATS servers' clocks. Canaries of an earlier
// run it finds are only removed.
const sinkSkew = time.Minute

// Check publishes one heartbeat fact (kind, data) carrying a new canary and
// says what is wrong with the pipeline, or "" when the canary came back
// through rules and outbox within wait and the storage is not failing.
func (c *Canary) Check(ctx context.Context, kind string, data any, wait time.Duration) string {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	done, err := c.publish(pctx, kind, data)
	cancel()
	if c.storage != nil {
		c.storage.report("facts", err)
	}
	// The storage's own words first: they say what to fix.
	if p := c.storage.problem(); p != "" {
		return p
	}
	if err != nil {
		return "heartbeat not accepted by the bus: " + err.Error()
	}
	arrived := c.wait(ctx, done, wait)
	if p := c.storage.problem(); p != "" {
		return p
	}
	if !arrived {
		return fmt.Sprintf("the health canary did not come back through rules and outbox within %s", wait)
	}
	return ""
}

// publish sends a heartbeat fact carrying a new canary, and returns the
// channel closed when the canary comes back through the outbox.
func (c *Canary) publish(ctx context.Context, kind string, hb any) (<-chan struct{}, error) {
	c.mu.Lock()
	c.n++
	id := strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(c.n, 10)
	done := make(chan struct{})
	c.arrived[id] = done
	c.mu.Unlock()
	data, err := bus.Wrap(kind, c.host, "zwatch", time.Now(), hb)
	if err != nil {
		return nil, err
	}
	m := nats.NewMsg(bus.Subject(c.host, kind))
	m.Data = data
	m.Header.Set(CanaryHeader, id)
	if _, err := c.b.JS.PublishMsg(ctx, m); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("publish heartbeat: %w", err)
	}
	return done, nil
}

func (c *Canary) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.arrived, id)
}

// wait reports whether the canary came back within d, and forgets it.
func (c *Canary) wait(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	// A late one is not proof of health now.
	c.mu.Lock()
	for id, ch := range c.arrived {
		if ch == done {
			delete(c.arrived, id)
		}
	}
	c.mu.Unlock()
	return false
}

// canaryResets bounds how many times in a row nats.go tries to recreate
// the sink's ordered consumer (10 s each, waiting 1 s, 2 s … between)
// before Next gives up and the sink asks again (unbounded by default).
const canaryResets = 3

// Sink reads the outbox for canaries until ctx ends. It is an ordered
// consumer: in memory, recreated by the client when it breaks, nothing on
// disk to be damaged. Each canary is removed from the outbox once seen.
//
// nats.go recreates the consumer on every Next, under its own timeouts
// rather than ctx's: while a cluster node is down and its streams elect new
// leaders that took up to 26 s, and stopping zwatch waited for it (the
// fleet test's "server did not stop"). So Next runs in a goroutine of its
// own, which ends after its current call, and Sink returns at once.
func (c *Canary) Sink(ctx context.Context) error {
	cons, err := c.b.JS.OrderedConsumer(ctx, bus.StreamAlerts, jetstream.OrderedConsumerConfig{
		FilterSubjects: bus.AlertSubjects, DeliverPolicy: jetstream.DeliverByStartTimePolicy,
		OptStartTime: new(c.created.Add(-sinkSkew)), MaxResetAttempts: canaryResets,
	})
	if err != nil {
		return fmt.Errorf("canary sink on %s: %w", bus.StreamAlerts, err)
	}
	msgs := make(chan jetstream.Msg)
	go func() {
		for ctx.Err() == nil {
			fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			msg, err := cons.Next(jetstream.FetchContext(fctx))
			cancel()
			if err != nil {
				continue
			}
			select {
			case msgs <- msg:
			case <-ctx.Done():
			}
		}
	}()
	for {
		var msg jetstream.Msg
		select {
		case <-ctx.Done():
			return nil
		case msg = <-msgs:
		}
		var n alert.Notification
		if _, err := bus.Decode(msg.Data(), "notification", &n); err != nil {
			continue
		}
		id, ok := strings.CutPrefix(n.ID, CanaryPrefix)
		if !ok {
			continue
		}
		c.mu.Lock()
		if ch := c.arrived[id]; ch != nil {
			close(ch)
			delete(c.arrived, id)
		}
		c.mu.Unlock()
		if md, err := msg.Metadata(); err == nil {
			if st, err := c.b.JS.Stream(ctx, bus.StreamAlerts); err == nil {
				_ = st.DeleteMsg(ctx, md.Sequence.Stream)
			}
		}
	}
}
