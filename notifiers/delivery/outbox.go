package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/clock"
	"github.com/zwatch/zwatch/internal/recent"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Options are what the daemon adds to the notify config.
type Options struct {
	// Guide adds the guided replacement text to disk alerts; optional.
	Guide notifiers.GuideFunc
	// AckWait is how long the bus waits for an acknowledgement before it
	// redelivers; a send in progress extends it with heartbeats. Default:
	// twice notify.send_timeout, at least 30s.
	AckWait time.Duration
	// Host names the dead-letter reports' origin when a notification has
	// none; default: the notification's host.
	Host string
	// Direct records what was sent around the outbox (NewDirect), so it is
	// not sent twice; RepairConsumer removes a damaged consumer. Optional.
	Direct         *DirectRecord
	RepairConsumer func(ctx context.Context, stream, consumer string) error
	// Inventory, when set, carries every host's pools and disks to the
	// channels whose senders implement channel.InventoryReceiver. Optional.
	Inventory *notifiers.InventoryFeed
	// Answers, when set, lets the channels whose senders carry answers
	// (channel.Answering: Telegram's buttons) put them on pages and read
	// the taps. Optional.
	Answers *Answers
	// Lease, when set, runs fn only while this process holds the lease
	// name among the servers sharing the bus, until ctx ends (fleet.Lead):
	// the answer readers of channels that read a shared account
	// (channel.SharedAnswers) run under it, one per account in the fleet
	// (answerlease.go). Nil: they run unconditionally (one server).
	Lease LeaseFunc
	// Links, when set, puts signed links to answer each page on the status
	// page (views/web) under its summary, in every channel. Optional.
	Links *Links
	// ReplaceHost, when set (actions.replace), lets the pages of this
	// host's replaceable disks offer the replacement (channel.Message's
	// Replace) on channels that carry answers.
	ReplaceHost string
	// Clock is the wall clock quiet hours are read on (quiet.go); nil is
	// time.Now. Tests set it to any time of day.
	Clock func() time.Time
}

// Answers is what carries a person's answer from a channel back to zwatch:
// the key that signs the buttons, and what an answer does.
type Answers struct {
	Key answer.Key
	Do  answer.Func
}

// Links makes the answer links of pages: URL is the page's answer
// endpoint (config.HTTPConfig.AnswerURL), Key the install's.
type Links struct {
	URL string
	Key answer.Key
}

// For is the links of a page of incident: acknowledge and snooze, each
// signed, single-use and working for answer.LinkFor. None for a test or a
// resolved notice.
func (l *Links) For(n alert.Notification, incident string) []notifiers.AnswerLink {
	if l == nil || l.URL == "" || len(l.Key) == 0 || n.Test || n.Status == alert.Resolved {
		return nil
	}
	var out []notifiers.AnswerLink
	for _, c := range answer.Choices() {
		link, err := answer.NewLink(answer.Action{Verb: c.Verb, Incident: incident}, n.Host, time.Now())
		if err != nil {
			return nil
		}
		out = append(out, notifiers.AnswerLink{Label: c.Label, URL: l.URL + "?t=" + l.Key.SignLink(link)})
	}
	return out
}

// PageURL is incident's card on the status page.
func (l *Links) PageURL(incident string) string {
	if l == nil || l.URL == "" || incident == "" {
		return ""
	}
	return strings.TrimSuffix(l.URL, "answer") + "#incident-" + incident
}

// Run delivers notifications from the ZWATCH_ALERTS stream to every channel
// until ctx ends. Each channel has its own durable consumer and goroutines:
// a slow or broken channel delays only itself, and within a channel one
// incident's retries delay only that incident (order.go).
func Run(ctx context.Context, b *bus.Bus, cfg config.NotifyConfig, opts Options, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	chans, err := notifiers.Channels(cfg, log)
	if err != nil {
		return err
	}
	if len(chans) == 0 {
		log.Warn("no notification channels configured: alerts stay in the outbox until one is added")
		<-ctx.Done()
		return nil
	}
	if err := ensureDeadLetterStream(ctx, b.JS, b.DeadLetterMaxBytes()); err != nil {
		return err
	}
	var wg sync.WaitGroup
	reading := map[string]string{} // account lease -> the channel that reads it
	for i := range chans {
		w := newWorker(b, &chans[i], cfg, opts, log)
		wg.Go(func() { w.run(ctx) })
		if a, ok := chans[i].Sender.(channel.Answering); ok && opts.Answers != nil && a.EnableAnswers(opts.Answers.Key, chans[i].Name) {
			// Two channels of one bot (two chats) get one reader, or they
			// refuse and split each other's taps.
			first := ""
			if acc, ok := chans[i].Sender.(channel.SharedAnswers); ok {
				name := AnswerLease(chans[i].Type, acc.AnswerAccount())
				if first = reading[name]; first == "" {
					reading[name] = chans[i].Name
				}
			}
			if first != "" {
				log.Info("answers from the channel's app are read by another channel's reader: they share the account", "channel", chans[i].Name, "reader", first)
			} else {
				log.Info("answers from the channel's app are on", "channel", chans[i].Name)
				wg.Go(func() { readAnswers(ctx, a, w.ch, opts, w.log) })
			}
		}
		if r, ok := chans[i].Sender.(channel.InventoryReceiver); ok && opts.Inventory != nil {
			wg.Go(func() {
				opts.Inventory.Feed(ctx, w.ch, r, w.timeout, func(failed uint64) time.Duration { return backoff(failed, w.initial, w.max) }, w.log)
			})
		}
	}
	log.Info("notifiers running", "channels", len(chans))
	wg.Wait()
	notifiers.CloseSenders(chans, notifiers.SendTimeout(cfg))
	return nil
}

type worker struct {
	b        *bus.Bus
	ch       *notifiers.Channel
	guide    notifiers.GuideFunc
	host     string
	log      *slog.Logger
	retryFor time.Duration
	initial  time.Duration
	max      time.Duration
	timeout  time.Duration
	ackWait  time.Duration
	// done remembers recently delivered notification ids, so a redelivery
	// after a failed acknowledgement is not sent twice.
	done *recent.Set[string]
	// order keeps each incident's notifications in order (order.go);
	// health decides when they are tried again (health.go).
	order  *lines
	health *health
	// links gives pages their answer links (Options.Links); nil: none.
	links notifiers.LinkFunc
	// page is Options.Links.PageURL; replaceHost Options.ReplaceHost.
	page        func(incident string) string
	replaceHost string
	// direct records what was sent directly while the outbox was down
	// (direct.go); repair recreates a consumer the server cannot open.
	direct *DirectRecord
	repair func(ctx context.Context, stream, consumer string) error
}

func newWorker(b *bus.Bus, ch *notifiers.Channel, cfg config.NotifyConfig, opts Options, log *slog.Logger) *worker {
	d := config.DefaultNotify()
	pick := func(v, def config.Duration) time.Duration {
		if v.D() > 0 {
			return v.D()
		}
		return def.D()
	}
	w := &worker{
		b: b, ch: ch, guide: opts.Guide, host: opts.Host,
		log:      log.With("channel", ch.Name, "type", ch.Type),
		retryFor: pick(cfg.RetryFor, d.RetryFor), initial: pick(cfg.RetryInitial, d.RetryInitial),
		max: pick(cfg.RetryMax, d.RetryMax), timeout: pick(cfg.SendTimeout, d.SendTimeout),
		ackWait: opts.AckWait, done: recent.New[string](1024),
		direct: opts.Direct, repair: opts.RepairConsumer,
	}
	if w.ackWait <= 0 {
		w.ackWait = max(2*w.timeout, 30*time.Second)
	}
	w.health = newHealth(w.initial, w.max)
	if opts.Links != nil && ch.Type != notifiers.TypeConsole {
		// Not into the log: a link is a capability, if one that needs a login.
		w.links, w.page = opts.Links.For, opts.Links.PageURL
	}
	if ch.Type != notifiers.TypeConsole {
		w.replaceHost = opts.ReplaceHost
	}
	w.order = newLines(w)
	w.order.clock = opts.Clock
	return w
}

// run fetches the channel's notifications and queues each behind the
// earlier ones of its incident; the incidents deliver independently.
func (w *worker) run(ctx context.Context) {
	defer w.order.stop()
	kctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go w.order.keepAlive(kctx)
	w.order.wg.Go(func() { w.order.probe(kctx) })
	var cons jetstream.Consumer
	for ctx.Err() == nil {
		if cons == nil {
			c, err := w.consumer(ctx)
			if rc, ok := w.reopenConsumer(ctx, err); ok {
				c, err = rc, nil
			}
			if err != nil {
				w.log.Error("cannot open the channel's outbox consumer; retrying", "err", err)
				_ = clock.Sleep(ctx, 5*time.Second)
				continue
			}
			cons = c
			w.order.learnPending(ctx, cons)
		}
		// Long poll, bounded so shutdown and consumer loss are noticed.
		// One pull asks for up to fetchBatch messages and hands each on as
		// it arrives: a burst of pages is not fetched one round trip at a
		// time.
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		got, err := w.fetch(ctx, fctx, cons)
		cancel()
		switch {
		case err == nil && got == 0:
			cons = w.stillThere(ctx, cons)
		case err == nil:
		case ctx.Err() != nil:
			return
		case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, jetstream.ErrNoMessages):
			cons = w.stillThere(ctx, cons)
		case errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrConsumerNotFound):
			w.log.Warn("outbox consumer vanished; recreating it", "err", err)
			cons = nil
		default:
			w.log.Warn("outbox fetch failed", "err", err)
			_ = clock.Sleep(ctx, time.Second)
		}
	}
}

// fetchBatch is how many outbox messages one pull asks for.
const fetchBatch = 64

// fetch dispatches what one pull brings until it is complete or pull (the
// pull's own bound) ends, and reports how many it brought; ctx is the
// worker's, which the incidents' deliveries run under.
func (w *worker) fetch(ctx, pull context.Context, cons jetstream.Consumer) (int, error) {
	batch, err := cons.Fetch(fetchBatch, jetstream.FetchContext(pull))
	if err != nil {
		return 0, err
	}
	n := 0
	for msg := range batch.Messages() {
		n++
		w.order.dispatch(ctx, msg)
	}
	if err := batch.Error(); err != nil && (n == 0 || !errors.Is(err, context.DeadlineExceeded)) {
		return n, err
	}
	return n, nil
}

// consumer creates the channel's durable consumer or updates the settings
// that may change; where it starts reading is fixed at creation.
func (w *worker) consumer(ctx context.Context) (jetstream.Consumer, error) {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	name := notifiers.ConsumerName(w.ch.Name)
	cfg := jetstream.ConsumerConfig{
		Durable:     name,
		Description: fmt.Sprintf("zwatch notify channel %q (%s)", w.ch.Name, w.ch.Type),
		// A new channel starts with the last hour, so alerts published while
		// the daemon started are not missed, without replaying old ones.
		DeliverPolicy: jetstream.DeliverByStartTimePolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       w.ackWait,
		MaxDeliver:    -1, // retry_for, not a count, ends the retries
		FilterSubject: bus.AlertSubjects[0],
		MaxAckPending: 1000,
		// A channel removed from the config leaves its consumer; the server
		// drops it after this long unused.
		InactiveThreshold: max(4*w.retryFor, 30*24*time.Hour),
	}
	if existing, err := w.b.JS.Consumer(cctx, bus.StreamAlerts, name); err == nil {
		info := existing.CachedInfo()
		cfg.DeliverPolicy = info.Config.DeliverPolicy
		cfg.OptStartTime = info.Config.OptStartTime
		cfg.OptStartSeq = info.Config.OptStartSeq
	} else if errors.Is(err, jetstream.ErrConsumerNotFound) {
		start := time.Now().Add(-time.Hour)
		cfg.OptStartTime = &start
	} else {
		return nil, fmt.Errorf("look up consumer %s: %w", name, err)
	}
	c, err := w.b.JS.CreateOrUpdateConsumer(cctx, bus.StreamAlerts, cfg)
	if err != nil {
		return nil, fmt.Errorf("consumer %s on %s: %w", name, bus.StreamAlerts, err)
	}
	return c, nil
}

// outcome is what became of one look at an outbox message.
type outcome struct {
	// tried: the service was asked; err says whether it accepted. Only a
	// tried message tells the channel's health anything.
	tried bool
	err   error
	// retryIn keeps the message queued (zero: done with it). After a
	// failure it is the message's own backoff; hold makes it a time before
	// which it must not be tried at all (the direct sender has it in
	// flight, the dead-letter stream did not take it).
	retryIn time.Duration
	hold    bool
	// ack, after a delivery, confirms it with the bus: run once the send
	// slot is given back, since the service has nothing more to do with it.
	ack func()
}

// handle delivers one outbox message. It is acknowledged only after the
// service accepted it (outcome.ack, which the caller runs), and after
// retry_for it goes to the dead-letter stream. A message that stays keeps
// its place at the head of its incident; when it is tried again is the
// channel's decision (health.go).
// failed counts this run's failed attempts at it so far.
func (w *worker) handle(ctx context.Context, msg jetstream.Msg, failed uint64) outcome {
	meta, err := msg.Metadata()
	if err != nil {
		w.log.Error("outbox message without metadata; dropping it", "err", err)
		_ = msg.Term()
		return outcome{}
	}
	var n alert.Notification
	if _, err := bus.Decode(msg.Data(), "notification", &n); err != nil {
		w.log.Error("outbox message is not a notification; dropping it", "subject", msg.Subject(), "seq", meta.Sequence.Stream, "err", err)
		_ = msg.TermWithReason("undecodable")
		return outcome{}
	}
	// Retries happen in this run, not by redelivery: count both.
	attempt := meta.NumDelivered + failed
	log := w.log.With("id", n.ID, "attempt", attempt)
	if n.ID != "" && (w.done.Has(n.ID) || w.skipDirect(n)) {
		w.ack(ctx, msg, n, log)
		return outcome{}
	}
	sel, ok := w.ch.Select(n)
	if !ok {
		w.ack(ctx, msg, n, log)
		return outcome{}
	}
	if !w.direct.begin(n.ID, w.ch.Name) {
		if w.skipDirect(n) {
			w.ack(ctx, msg, n, log)
			return outcome{}
		}
		// The direct sender has it in flight: see how it ended.
		return outcome{retryIn: directSendWait, hold: true}
	}
	m := notifiers.RenderAnswerable(sel, w.guide, w.links)
	if w.replaceHost != "" {
		m.Replace = answer.ReplaceOffered(sel, w.replaceHost)
	}
	if w.page != nil && !m.Resolved && !m.Test {
		m.PageURL = w.page(m.Incident())
	}
	start := time.Now()
	err = w.send(ctx, msg, m)
	w.direct.end(n.ID, w.ch.Name, err == nil)
	if err == nil {
		level := slog.LevelInfo
		if w.ch.Type == notifiers.TypeConsole {
			level = slog.LevelDebug // the console line itself says it all
		}
		log.Log(ctx, level, "notification delivered", "summary", m.Summary, "took", time.Since(start).Round(time.Millisecond),
			"since_created", time.Since(n.Created).Round(time.Millisecond), legs(n.Timing, time.Now()))
		w.delivered(n.ID)
		return outcome{tried: true, ack: func() { w.ack(ctx, msg, n, log) }}
	}
	if ctx.Err() != nil {
		// Shutting down mid-send: hand it back at once for the next run.
		_ = msg.Nak()
		return outcome{}
	}
	age := time.Since(meta.Timestamp)
	if age >= w.retryFor {
		m := *meta
		m.NumDelivered = attempt
		if w.deadLetter(ctx, msg, &m, n, err, log) {
			return outcome{tried: true, err: err}
		}
		return outcome{tried: true, err: err, retryIn: w.max, hold: true}
	}
	delay := backoff(attempt, w.initial, w.max)
	if left := w.retryFor - age; delay > left {
		delay = left
	}
	log.Warn("notification not delivered; the channel tries it again", "err", err,
		"gives_up_in", (w.retryFor - age).Round(time.Second))
	return outcome{tried: true, err: err, retryIn: max(delay, time.Millisecond)}
}

// sendStopGrace bounds how long a send in flight may hold up a stop.
const sendStopGrace = 5 * time.Second

// send runs one attempt under send_timeout, telling the bus the message is
// still being worked on so a slow server does not cause a redelivery.
func (w *worker) send(ctx context.Context, msg jetstream.Msg, m notifiers.Message) error {
	// A send in flight when zwatch stops gets stopGrace more to finish and
	// be acknowledged: cut off, the service may have it all the same, and
	// another server of a fleet would send it again at once.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.timeout)
	defer cancel()
	stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(sendStopGrace, cancel) })
	defer stopGrace()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(w.ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return w.ch.Send(sctx, m)
}

// ack confirms with the server (double ack). If that fails — the
// consumer's leader is being elected after a NATS node failed, the
// connection is reconnecting — it is tried again in the background until
// confirmed: left unacknowledged, the message would stay pending until
// AckWait, and a restarted fleet peer waits that long for it to come back
// before the incident's next notification (learnPending). Meanwhile the id
// stays in done, so a redelivery is dropped instead of sent again.
func (w *worker) ack(ctx context.Context, msg jetstream.Msg, n alert.Notification, log *slog.Logger) {
	// Ack even when shutting down: the send already happened.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	err := msg.DoubleAck(actx)
	cancel()
	if err == nil {
		return
	}
	if ctx.Err() != nil {
		log.Warn("acknowledgement not confirmed while stopping; the redelivery will be recognised", "err", err)
		return
	}
	log.Warn("acknowledgement not confirmed; trying again (a redelivery meanwhile is recognised and skipped)", "err", err)
	w.order.wg.Go(func() { w.reack(ctx, msg, log) })
}

// reack tries an unconfirmed acknowledgement again, on a short backoff,
// until the server confirms it, ctx ends, or AckWait has passed (by then
// the server has redelivered it, and done recognises the redelivery).
func (w *worker) reack(ctx context.Context, msg jetstream.Msg, log *slog.Logger) {
	deadline := time.Now().Add(w.ackWait)
	wait := 250 * time.Millisecond
	for tries := 2; time.Now().Before(deadline); tries++ {
		if clock.Sleep(ctx, wait) != nil {
			return
		}
		wait = min(2*wait, 4*time.Second)
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := msg.DoubleAck(actx)
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
			log.Info("acknowledgement confirmed", "tries", tries)
			return
		}
	}
	log.Warn("acknowledgement still not confirmed after AckWait; the redelivery will be recognised")
}

// backoff is initial·2^(attempt-1), capped at max.
func backoff(attempt uint64, initial, max time.Duration) time.Duration {
	d := initial
	for i := uint64(1); i < attempt && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// legs is the latency budget of a delivered notification for the log: each
// leg of its fact's path (alert.Timing) and the channel's own, up to its
// answer at accepted, in milliseconds.
func legs(t *alert.Timing, accepted time.Time) slog.Attr {
	ls, last := t.Legs()
	attrs := make([]any, 0, len(ls)+1)
	for _, l := range ls {
		attrs = append(attrs, slog.Int64(l.Name, l.Took.Milliseconds()))
	}
	if !last.IsZero() {
		attrs = append(attrs, slog.Int64("to_channel", accepted.Sub(last).Milliseconds()))
	}
	return slog.Group("legs_ms", attrs...)
}
