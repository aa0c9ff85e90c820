package delivery

import (
	"context"
	"errors"
	"html"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
)

// DirectNote is the line a notification sent around the outbox carries, so
// the person knows it was best effort and may come again once.
const DirectNote = "sent directly: zwatch's outbox is unavailable"

// DirectRecord remembers which channels received a notification, directly
// or through the outbox: when one sent directly is published to the outbox
// later (with the same ID), the channel's worker marks it delivered instead
// of sending it twice, and Direct does not resend what a worker delivered.
// It is shared by Direct and the outbox workers of one process.
//
// A send in flight is recorded too: a channel worker whose webhook takes
// seconds under load and the direct sender must not both send one
// notification (seen in make e2e: two identical pages 24 ms apart).
type DirectRecord struct {
	mu      sync.Mutex
	max     int
	order   []string
	sent    map[string]map[string]bool // notification ID → channel names
	sending map[string]bool            // ID + "\x00" + channel, while a send runs
}

// NewDirectRecord returns an empty record that keeps the last 4096 IDs.
func NewDirectRecord() *DirectRecord {
	return &DirectRecord{max: 4096, sent: map[string]map[string]bool{}, sending: map[string]bool{}}
}

// begin claims the send of notification id to channel. It is false when
// the channel already received it, or another sender is sending it now;
// a claim is ended by end. An empty ID (nothing to recognise) is always
// sent.
func (r *DirectRecord) begin(id, channel string) bool {
	if r == nil || id == "" {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := id + "\x00" + channel
	if r.sent[id][channel] || r.sending[k] {
		return false
	}
	r.sending[k] = true
	return true
}

// end ends the claim begin took; ok records the delivery.
func (r *DirectRecord) end(id, channel string, ok bool) {
	if r == nil || id == "" {
		return
	}
	r.mu.Lock()
	delete(r.sending, id+"\x00"+channel)
	r.mu.Unlock()
	if ok {
		r.add(id, channel)
	}
}

func (r *DirectRecord) add(id, channel string) {
	if r == nil || id == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	chans := r.sent[id]
	if chans == nil {
		chans = map[string]bool{}
		r.sent[id] = chans
		r.order = append(r.order, id)
		if len(r.order) > r.max {
			delete(r.sent, r.order[0])
			r.order = r.order[1:]
		}
	}
	chans[channel] = true
}

// Delivered reports whether channel already received notification id directly.
func (r *DirectRecord) Delivered(id, channel string) bool {
	if r == nil || id == "" {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[id][channel]
}

// Direct sends notifications straight to the channels, for when the outbox
// cannot take them (the state disk is full or damaged). There is no retry
// and no persistence: it is the best that can be done without storage.
type Direct struct {
	chans   []notifiers.Channel
	rec     *DirectRecord
	guide   notifiers.GuideFunc
	timeout time.Duration
	log     *slog.Logger
}

// NewDirect builds the channels of cfg (the console too, when on) for
// direct delivery; rec is shared with the outbox workers (Options.Direct).
func NewDirect(cfg config.NotifyConfig, opts Options, rec *DirectRecord, log *slog.Logger) (*Direct, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	chans, err := notifiers.Channels(cfg, log)
	if err != nil {
		return nil, err
	}
	return &Direct{chans: chans, rec: rec, guide: opts.Guide, timeout: notifiers.SendTimeout(cfg), log: log}, nil
}

// Close closes the connections the direct senders opened (MQTT), when the
// daemon stops.
func (d *Direct) Close() { notifiers.CloseSenders(d.chans, d.timeout) }

// Deliver sends n to every channel that takes it, all at once, each under
// send_timeout. It returns the channels reached; the error joins the
// failures, and is non-nil when a channel that should have had n did not.
func (d *Direct) Deliver(ctx context.Context, n alert.Notification) ([]string, error) {
	var (
		mu   sync.Mutex
		sent []string
		errs []error
		wg   sync.WaitGroup
	)
	for i := range d.chans {
		ch := &d.chans[i]
		sel, ok := ch.Select(n)
		if !ok || !d.rec.begin(n.ID, ch.Name) {
			continue // not for it, received already, or its worker is sending it
		}
		m := notifiers.RenderGuided(sel, d.guide)
		m.Text = strings.TrimRight(m.Text, "\n") + "\n\n(" + DirectNote + ")\n"
		if m.HTML != "" {
			m.HTML += "<p><em>(" + html.EscapeString(DirectNote) + ")</em></p>"
		}
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, d.timeout)
			defer cancel()
			err := ch.Send(sctx, m)
			d.rec.end(n.ID, ch.Name, err == nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			sent = append(sent, ch.Name)
		})
	}
	wg.Wait()
	if len(sent) > 0 {
		d.log.Info("notification sent directly", "id", n.ID, "channels", sent)
	}
	return sent, errors.Join(errs...)
}

// skipDirect is the outbox worker's hook: a notification this channel
// already received directly is marked delivered, not sent again.
func (w *worker) skipDirect(n alert.Notification) bool {
	if w.direct.Delivered(n.ID, w.ch.Name) { // false for an empty ID
		w.done.Add(n.ID)
		return true
	}
	return false
}

// directSendWait is how soon a worker looks again at a notification the
// direct sender is sending to its channel right now.
const directSendWait = time.Second

// delivered records a delivery by the outbox worker.
func (w *worker) delivered(id string) {
	if id == "" {
		return // nothing to recognise a redelivery by
	}
	w.done.Add(id)
	w.direct.add(id, w.ch.Name)
}

// stillThere checks, after a quiet long poll, that the channel's consumer
// still exists: when JetStream is reloaded after a storage failure, a
// consumer it could not keep on disk is gone and a fetch only times out.
// It returns nil (open it again) for a consumer that is gone.
func (w *worker) stillThere(ctx context.Context, cons jetstream.Consumer) jetstream.Consumer {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cons.Info(ictx); errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
		w.log.Warn("outbox consumer vanished; recreating it", "err", err)
		return nil
	}
	return cons
}

// reopenConsumer is the outbox worker's hook when its consumer cannot be
// opened: a consumer whose stored state the server cannot read (error
// 10012, "error creating store for consumer") is removed through
// Options.RepairConsumer and created again from the last hour, and what may
// have been lost is said.
func (w *worker) reopenConsumer(ctx context.Context, err error) (jetstream.Consumer, bool) {
	if w.repair == nil || !ConsumerStoreDamaged(err) {
		return nil, false
	}
	name := notifiers.ConsumerName(w.ch.Name)
	if rerr := w.repair(ctx, bus.StreamAlerts, name); rerr != nil {
		w.log.Error("the channel's outbox consumer is damaged and could not be removed", "consumer", name, "err", rerr)
		return nil, false
	}
	c, cerr := w.consumer(ctx)
	if cerr != nil {
		w.log.Error("the channel's outbox consumer was removed but cannot be created again", "consumer", name, "err", cerr)
		return nil, false
	}
	w.log.Error("the channel's outbox consumer was damaged and has been recreated: it starts again from the last hour, so notifications older than that which were not yet delivered are lost, and ones from the last hour may come twice",
		"consumer", name)
	return c, true
}

// ConsumerStoreDamaged reports whether err is the server's refusal to open a
// consumer whose files it cannot read.
func ConsumerStoreDamaged(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.ErrorCode(10012) {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "error creating store for consumer")
}
