package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// MaxEvents is the most events Events returns: the newest of the range.
const MaxEvents = 5000

// maxEventBytes bounds a stored event a reader decodes.
const maxEventBytes = 64 << 10

// scanDedupe remembers, per host, kind and pool, the end of the newest
// scan stored; it is read from the store the first time a host's kind is
// needed, so that a restart records no scan twice.
type scanDedupe struct {
	newest map[string]int64
	loaded map[string]bool
}

func newScanDedupe() scanDedupe {
	return scanDedupe{newest: map[string]int64{}, loaded: map[string]bool{}}
}

// alertDedupe remembers the alert transitions already stored, so that a
// notification sent again (a reminder, a second channel's copy) adds none.
type alertDedupe map[string]struct{}

// maxAlertKeys bounds alertDedupe; past it the memory starts over.
const maxAlertKeys = 2048

func newAlertDedupe() alertDedupe { return alertDedupe{} }

// scanEvent stores a scrub or resilver that ended, once.
func (w *writer) scanEvent(ctx context.Context, host string, p *zfs.Pool) {
	sc := p.Scan
	var kind string
	switch sc.Function {
	case zfs.ScanScrub:
		kind = EventScrub
	case zfs.ScanResilver:
		kind = EventResilver
	default:
		return
	}
	if (sc.State != zfs.ScanStateFinished && sc.State != zfs.ScanStateCanceled) || sc.End == nil {
		return
	}
	if err := w.loadScans(ctx, host, kind); err != nil {
		w.log.Warn("history cannot read the scans it stored; this one waits for the next status", "host", host, "err", err)
		return
	}
	key := host + "\x00" + kind + "\x00" + p.Name
	end := sc.End.UnixNano()
	if end <= w.scans.newest[key] {
		return
	}
	w.scans.newest[key] = end
	w.storeEvent(ctx, Event{
		Host: host, Kind: kind, At: sc.End.UTC(), Pool: p.Name, State: sc.State, Start: sc.Start,
		ExaminedBytes: sc.ExaminedBytes, RepairedBytes: sc.RepairedBytes, Errors: sc.Errors,
	})
}

func (w *writer) loadScans(ctx context.Context, host, kind string) error {
	lk := host + "\x00" + kind
	if w.scans.loaded[lk] {
		return nil
	}
	err := readMsgs(ctx, w.s.js, StreamEvents, []string{eventSubject(host, kind)}, time.Time{}, eventsPerSubject*2, func(m jetstream.Msg) error {
		e, err := decodeEvent(m.Data())
		if err == nil && e.Host == host && e.Kind == kind {
			key := lk + "\x00" + e.Pool
			w.scans.newest[key] = max(w.scans.newest[key], e.At.UnixNano())
		}
		return nil
	})
	if err != nil && !errors.Is(err, errReadLimit) {
		return err
	}
	w.scans.loaded[lk] = true
	return nil
}

// actionEvent stores a person's answer to an incident, once: the facts
// stream hands the newest one again at each start.
func (w *writer) actionEvent(ctx context.Context, env bus.Envelope, d *facts.IncidentActionData) {
	if err := w.loadScans(ctx, env.Host, EventAction); err != nil {
		w.log.Warn("history cannot read the answers it stored; this one is not recorded", "host", env.Host, "err", err)
		return
	}
	key := env.Host + "\x00" + EventAction + "\x00"
	if at := env.CollectedAt.UnixNano(); at > w.scans.newest[key] {
		w.scans.newest[key] = at
	} else {
		return
	}
	what := map[string]string{facts.ActionAck: "acknowledged", facts.ActionUnack: "acknowledgement taken back", facts.ActionSnooze: "snoozed"}[d.Action]
	if what == "" {
		return
	}
	summary := fmt.Sprintf("incident %s %s by %s (%s)", d.Incident, what, d.By, d.Source)
	if d.Until != nil {
		summary += " until " + d.Until.UTC().Format("2006-01-02 15:04 UTC")
	}
	if d.Comment != "" {
		summary += ": " + d.Comment
	}
	w.storeEvent(ctx, Event{Host: env.Host, Kind: EventAction, At: env.CollectedAt.UTC(), Status: d.Action, Incident: d.Incident, Summary: summary})
}

// notification stores each alert of a notification as it went out: its
// firing at StartsAt, its resolving at EndsAt. Test messages and the rule
// engine's canaries are no events of the machine.
func (w *writer) notification(ctx context.Context, subject string, data []byte) {
	var note alert.Notification
	if _, err := bus.Decode(data, "notification", &note); err != nil {
		w.log.Debug("history skips a notification it cannot read", "subject", subject, "err", err)
		return
	}
	if note.Test || strings.HasPrefix(note.ID, delivery.CanaryPrefix) {
		return
	}
	host := note.Host
	if host == "" {
		host, _ = bus.HostOf(subject)
	}
	for _, a := range note.Alerts {
		at := a.StartsAt
		if a.State == alert.Resolved && a.EndsAt != nil {
			at = *a.EndsAt
		}
		if at.IsZero() {
			at = note.Created
		}
		key := fmt.Sprintf("%s\x00%s\x00%s\x00%d", host, a.Fingerprint, a.State, at.UnixNano())
		if _, seen := w.alerts[key]; seen {
			continue
		}
		if len(w.alerts) >= maxAlertKeys {
			clear(w.alerts)
		}
		w.alerts[key] = struct{}{}
		w.storeEvent(ctx, Event{
			Host: host, Kind: EventAlert, At: at.UTC(), Pool: a.Labels["pool"],
			Alert: a.Name, Severity: string(a.Severity), Status: string(a.State),
			Fingerprint: a.Fingerprint, Summary: a.Summary,
		})
	}
}

func (w *writer) storeEvent(ctx context.Context, e Event) {
	data, err := json.Marshal(e)
	if err != nil {
		w.log.Warn("history event not stored", "host", e.Host, "kind", e.Kind, "err", err)
		return
	}
	w.publish(ctx, eventSubject(e.Host, e.Kind), data)
}

func decodeEvent(b []byte) (Event, error) {
	var e Event
	if len(b) > maxEventBytes {
		return e, fmt.Errorf("history event of %d bytes: more than %d", len(b), maxEventBytes)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("decode history event: %w", err)
	}
	if e.Host == "" || e.Kind == "" || e.At.IsZero() {
		return e, errors.New("history event without host, kind or time")
	}
	return e, nil
}

// EventKinds are the kinds Events knows.
var EventKinds = []string{EventScrub, EventResilver, EventAlert, EventAction}

// Events are host's events from..to, oldest first, of the kinds given (all
// when none); at most MaxEvents, the newest.
func (s *Store) Events(ctx context.Context, host string, from, to time.Time, kinds ...string) ([]Event, error) {
	if err := checkRange(from, to); err != nil {
		return nil, err
	}
	if len(kinds) == 0 {
		kinds = EventKinds
	}
	var subjects []string
	for _, k := range kinds {
		if !slices.Contains(EventKinds, k) {
			return nil, fmt.Errorf("event kind %q: want one of %s", k, strings.Join(EventKinds, ", "))
		}
		subjects = append(subjects, eventSubject(host, k))
	}
	var out []Event
	err := readMsgs(ctx, s.js, StreamEvents, subjects, time.Time{}, eventsPerSubject*len(subjects)+len(subjects), func(m jetstream.Msg) error {
		e, err := decodeEvent(m.Data())
		if err != nil || e.Host != host || e.At.Before(from) || e.At.After(to) {
			return nil
		}
		out = append(out, e)
		if len(out) > 2*MaxEvents {
			out = slices.Delete(out, 0, len(out)-MaxEvents)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errReadLimit) {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.At.Compare(b.At) })
	if len(out) > MaxEvents {
		out = out[len(out)-MaxEvents:]
	}
	return out, nil
}
