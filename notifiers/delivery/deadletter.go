package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
)

// Dead-letter stream: notifications a channel could not deliver within
// notify.retry_for. Its subjects do not overlap the facts or alerts streams.
const (
	StreamDeadLetter = "ZWATCH_DEADLETTER"
	// KindDeadLetter is the subject kind: zwatch.v1.<host>.deadletter.<channel>.
	KindDeadLetter = "deadletter"
	// DeadLetterAlert names the warning sent through the other channels
	// (the channel registry drops it for the channel it is about).
	DeadLetterAlert = notifiers.DeadLetterAlert
)

// maxDeadLettersRead bounds what DeadLetters reads: the newest ones.
const maxDeadLettersRead = 1000

// DeadLetterSubject is the dead-letter stream's subject filter, for every host.
const DeadLetterSubject = "zwatch." + bus.Version + ".*." + KindDeadLetter + ".*"

// DeadLetter is one notification a channel gave up on.
type DeadLetter struct {
	Channel      string             `json:"channel"`
	ChannelType  string             `json:"channel_type"`
	Notification alert.Notification `json:"notification"`
	Attempts     uint64             `json:"attempts"`
	// QueuedAt is when the notification entered the outbox.
	QueuedAt  time.Time `json:"queued_at"`
	DeadAt    time.Time `json:"dead_at"`
	LastError string    `json:"last_error"`
	// Seq is the message's sequence in the dead-letter stream.
	Seq uint64 `json:"-"`
}

func ensureDeadLetterStream(ctx context.Context, js jetstream.JetStream, maxBytes int64) error {
	rep := 1
	if s, err := js.Stream(ctx, bus.StreamAlerts); err == nil {
		rep = max(1, s.CachedInfo().Config.Replicas)
	}
	err := bus.RetryAPI(ctx, func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: StreamDeadLetter, Subjects: []string{DeadLetterSubject}, Storage: jetstream.FileStorage,
			MaxAge: 90 * 24 * time.Hour, MaxBytes: maxBytes, Discard: jetstream.DiscardOld, Replicas: rep,
			AllowDirect: true,
			Description: "zwatch notifications a channel could not deliver (read with zwatch alerts)",
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("create stream %s: %w", StreamDeadLetter, err)
	}
	return nil
}

// deadLetter stores the notification, reports it through the other
// channels, and only then removes it from the channel's queue: a crash in
// between repeats the report, it never loses it. It reports whether the
// notification was stored; if not, the caller tries again later.
func (w *worker) deadLetter(ctx context.Context, msg jetstream.Msg, meta *jetstream.MsgMetadata, n alert.Notification, cause error, log *slog.Logger) (stored bool) {
	host := n.Host
	if host == "" {
		host = w.host
	}
	dl := DeadLetter{
		Channel: w.ch.Name, ChannelType: w.ch.Type, Notification: n, Attempts: meta.NumDelivered,
		QueuedAt: meta.Timestamp, DeadAt: time.Now().UTC(), LastError: cause.Error(),
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	data, err := bus.Wrap(KindDeadLetter, host, "notifiers", dl.DeadAt, dl)
	if err == nil {
		_, err = w.b.JS.Publish(pctx, bus.Subject(host, KindDeadLetter, w.ch.Name), data,
			jetstream.WithMsgID("dl-"+notifiers.ConsumerName(w.ch.Name)+"-"+n.ID))
	}
	if err != nil {
		log.Error("cannot store the undeliverable notification; retrying later", "err", err)
		return false
	}
	log.Error("notification dead-lettered: giving up on this channel", "summary", notifiers.Render(n).Summary,
		"attempts", meta.NumDelivered, "queued_at", meta.Timestamp, "err", cause)
	if !onlyDeadLetterReports(n) {
		if err := w.report(pctx, host, dl); err != nil {
			log.Error("cannot report the dead letter through the other channels", "err", err)
		}
	}
	w.ack(ctx, msg, n, log)
	return true
}

// report publishes a warning notification to the outbox; every channel but
// this one (see Channel.Select) delivers it.
func (w *worker) report(ctx context.Context, host string, dl DeadLetter) error {
	now := time.Now().UTC()
	orig := notifiers.Render(dl.Notification).Summary
	a := alert.Alert{
		Name: DeadLetterAlert, Severity: alert.Warning, State: alert.Firing,
		Labels: map[string]string{"alertname": DeadLetterAlert, "channel": dl.Channel, "host": host},
		Summary: fmt.Sprintf("zwatch could not deliver to %s (%s) for %s: %s",
			dl.Channel, dl.ChannelType, roughly(dl.DeadAt.Sub(dl.QueuedAt)), orig),
		Description: fmt.Sprintf("After %d attempts, channel %q gave up on notification %s. Last error: %s. "+
			"Run `zwatch notify test --channel %s` to see what is wrong; `zwatch alerts` lists undelivered notifications.",
			dl.Attempts, dl.Channel, dl.Notification.ID, dl.LastError, dl.Channel),
		Evidence: map[string]string{"channel": dl.Channel, "notification": dl.Notification.ID, "last_error": dl.LastError},
		StartsAt: now,
	}
	a.Fingerprint = alert.Fingerprint(a.Labels)
	n := alert.Notification{
		ID: "deadletter-" + config.ChannelToken(dl.Channel) + "-" + dl.Notification.ID, GroupKey: DeadLetterAlert + "/" + dl.Channel,
		Host: host, Status: alert.Firing, Alerts: []alert.Alert{a}, Created: now,
	}
	data, err := bus.Wrap("notification", host, "notifiers", now, n)
	if err != nil {
		return err
	}
	if _, err := w.b.JS.Publish(ctx, bus.Subject(host, bus.KindAlert), data, jetstream.WithMsgID(n.ID)); err != nil {
		return fmt.Errorf("publish dead-letter report: %w", err)
	}
	return nil
}

func onlyDeadLetterReports(n alert.Notification) bool {
	for _, a := range n.Alerts {
		if a.Name != DeadLetterAlert {
			return false
		}
	}
	return len(n.Alerts) > 0
}

// DeadLetters reads the dead-lettered notifications (the newest
// maxDeadLettersRead), oldest first, for `zwatch alerts` and the views. No
// stream yet means none.
func DeadLetters(ctx context.Context, js jetstream.JetStream) ([]DeadLetter, error) {
	s, err := js.Stream(ctx, StreamDeadLetter)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", StreamDeadLetter, err)
	}
	st := s.CachedInfo().State
	if st.Msgs == 0 {
		return nil, nil
	}
	first := st.FirstSeq
	if st.LastSeq >= maxDeadLettersRead && st.LastSeq-maxDeadLettersRead+1 > first {
		first = st.LastSeq - maxDeadLettersRead + 1
	}
	msgs, err := bus.MsgRange(ctx, js, StreamDeadLetter, first, maxDeadLettersRead)
	if err != nil {
		return nil, fmt.Errorf("read dead letters: %w", err)
	}
	out := make([]DeadLetter, 0, len(msgs))
	for _, raw := range msgs {
		var dl DeadLetter
		if _, err := bus.Decode(raw.Data, KindDeadLetter, &dl); err != nil {
			return out, fmt.Errorf("dead letter %d: %w", raw.Sequence, err)
		}
		dl.Seq = raw.Sequence
		out = append(out, dl)
	}
	return out, nil
}

// roughly rounds a waiting time the way a person says it.
func roughly(d time.Duration) time.Duration {
	if d >= time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}
