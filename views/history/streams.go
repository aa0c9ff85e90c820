package history

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
)

// Stream names: one per tier, so that each keeps its own age and
// per-subject count, and one for events.
const (
	StreamRaw    = "ZWATCH_HISTORY_RAW"
	StreamHour   = "ZWATCH_HISTORY_HOUR"
	StreamDay    = "ZWATCH_HISTORY_DAY"
	StreamEvents = "ZWATCH_HISTORY_EVENTS"
)

// kindHistory is the subject token after the host:
// zwatch.v1.<host>.history.<tier>.<disk|pool>.<token>.
const kindHistory = bus.KindHistory

// tierStream names each tier's stream.
var tierStream = map[string]string{TierRaw: StreamRaw, TierHour: StreamHour, TierDay: StreamDay}

// tierPeriod is each tier's period in seconds (raw points have none).
var tierPeriod = map[string]int32{TierRaw: 0, TierHour: 3600, TierDay: 86400}

// eventsPerSubject bounds each host's events of one kind: years of daily
// flapping alerts, a scrub a week for centuries.
const eventsPerSubject = 20000

// rawSlack lets a few more raw points than raw_for/raw_interval stay per
// source, for facts that land just off their slot.
const rawSlack = 16

// StreamCount is how many streams the history makes, each of history.max_mb:
// the bus store must hold StreamCount * max_mb MiB for them.
const StreamCount = 4

// Store keeps and reads the history. Its writer (Run) is the only
// goroutine that changes its state; the read methods are safe to call
// from any goroutine.
type Store struct {
	js  jetstream.JetStream
	cfg config.HistoryConfig
	log *slog.Logger
}

// Open creates (or updates) the history streams and returns the store.
// The streams take replicas copies; each is bounded by cfg.MaxMB.
func Open(ctx context.Context, js jetstream.JetStream, cfg config.HistoryConfig, replicas int, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	for _, sc := range streamConfigs(cfg, max(replicas, 1)) {
		if err := createStream(ctx, js, sc); err != nil {
			return nil, err
		}
	}
	return &Store{js: js, cfg: cfg, log: log}, nil
}

// Attach reads the history of a bus whose daemon created the streams
// (zwatch history export): it creates nothing.
func Attach(ctx context.Context, js jetstream.JetStream, cfg config.HistoryConfig) (*Store, error) {
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	for _, name := range []string{StreamRaw, StreamHour, StreamDay, StreamEvents} {
		if _, err := js.Stream(ctx, name); err != nil {
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				return nil, fmt.Errorf("no history on this bus (stream %s is missing): history.enabled is off, or zwatch has not run since history came; start zwatch with history.enabled: true", name)
			}
			return nil, fmt.Errorf("history stream %s: %w", name, err)
		}
	}
	return &Store{js: js, cfg: cfg, log: slog.New(slog.DiscardHandler)}, nil
}

func checkConfig(cfg config.HistoryConfig) error {
	switch {
	case cfg.RawInterval.D() < time.Minute || cfg.RawInterval.D() > time.Hour:
		return fmt.Errorf("history.raw_interval %s: want 1m to 1h", config.FormatDuration(cfg.RawInterval.D()))
	case cfg.RawFor.D() < 24*time.Hour:
		return fmt.Errorf("history.raw_for %s: want at least 1d", config.FormatDuration(cfg.RawFor.D()))
	case cfg.HourlyFor.D() < cfg.RawFor.D() || cfg.MaxAge.D() < cfg.HourlyFor.D():
		return fmt.Errorf("history: want raw_for <= hourly_for <= max_age (have %s, %s, %s)", config.FormatDuration(cfg.RawFor.D()), config.FormatDuration(cfg.HourlyFor.D()), config.FormatDuration(cfg.MaxAge.D()))
	case cfg.MaxMB < 1:
		return fmt.Errorf("history.max_mb %d: want at least 1", cfg.MaxMB)
	}
	return nil
}

// perSubject is how many messages a tier keeps per source: its age over
// its period, so that a source's messages outlive neither the age nor the
// count, whatever the clock of the facts says.
func perSubject(cfg config.HistoryConfig, tier string) int64 {
	switch tier {
	case TierRaw:
		return int64(cfg.RawFor.D()/cfg.RawInterval.D()) + rawSlack
	case TierHour:
		return int64(cfg.HourlyFor.D()/time.Hour) + 2
	default:
		return int64(cfg.MaxAge.D()/(24*time.Hour)) + 2
	}
}

func streamConfigs(cfg config.HistoryConfig, replicas int) []jetstream.StreamConfig {
	maxBytes := int64(cfg.MaxMB) << 20
	mk := func(name, desc string, subjects []string, age time.Duration, perSubj int64) jetstream.StreamConfig {
		return jetstream.StreamConfig{
			Name: name, Description: desc, Subjects: subjects, Storage: jetstream.FileStorage,
			MaxAge: age, MaxBytes: maxBytes, MaxMsgsPerSubject: perSubj, Discard: jetstream.DiscardOld,
			Replicas: replicas, Compression: jetstream.S2Compression,
		}
	}
	return []jetstream.StreamConfig{
		mk(StreamRaw, "zwatch history: raw points of disks and pools", []string{tierSubjects(TierRaw)}, cfg.RawFor.D(), perSubject(cfg, TierRaw)),
		mk(StreamHour, "zwatch history: hourly aggregates", []string{tierSubjects(TierHour)}, cfg.HourlyFor.D(), perSubject(cfg, TierHour)),
		mk(StreamDay, "zwatch history: daily aggregates", []string{tierSubjects(TierDay)}, cfg.MaxAge.D(), perSubject(cfg, TierDay)),
		mk(StreamEvents, "zwatch history: scrubs, resilvers and alerts", []string{"zwatch." + bus.Version + ".*." + kindHistory + ".event.*"}, cfg.MaxAge.D(), eventsPerSubject),
	}
}

// tierSubjects is every host's subjects of one tier.
func tierSubjects(tier string) string {
	return "zwatch." + bus.Version + ".*." + kindHistory + "." + tier + ".>"
}

// StreamSubjects are the subjects of every history stream, for checks
// that they overlap no other stream's.
func StreamSubjects() []string {
	var out []string
	for _, sc := range streamConfigs(config.DefaultHistory(), 1) {
		out = append(out, sc.Subjects...)
	}
	return out
}

// pointSubject is where one source's points of a tier go.
func pointSubject(host, tier, source string) (string, error) {
	kind, name, err := SplitSource(source)
	if err != nil {
		return "", err
	}
	return bus.Subject(host, kindHistory+"."+tier+"."+kind, name), nil
}

// eventSubject is where one host's events of a kind go.
func eventSubject(host, kind string) string {
	return bus.Subject(host, kindHistory+".event", kind)
}

func createStream(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) error {
	if err := bus.RetryAPI(ctx, func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, sc)
		return err
	}); err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == errStorageExceeded {
			return fmt.Errorf("create history stream %s: the bus store has no room for its %d MiB (history.max_mb; JetStream sets aside each stream's bound at creation): lower history.max_mb, or free space under state_dir: %w", sc.Name, sc.MaxBytes>>20, err)
		}
		return fmt.Errorf("create history stream %s (%d MiB, history.max_mb): %w", sc.Name, sc.MaxBytes>>20, err)
	}
	return nil
}

// errStorageExceeded is JetStream's "insufficient storage resources".
const errStorageExceeded jetstream.ErrorCode = 10047

// Size is what the history streams hold, in bytes, over every host.
func (s *Store) Size(ctx context.Context) (uint64, error) {
	var total uint64
	for _, name := range []string{StreamRaw, StreamHour, StreamDay, StreamEvents} {
		st, err := s.js.Stream(ctx, name)
		if err != nil {
			return 0, fmt.Errorf("history stream %s: %w", name, err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			return 0, fmt.Errorf("history stream %s: %w", name, err)
		}
		total += info.State.Bytes
	}
	return total, nil
}
