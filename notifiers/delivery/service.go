package delivery

import (
	"context"
	"log/slog"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
)

// Service is a server's whole delivery path: the outbox, direct delivery
// around it, the storage watch, consumer repair and the health canary,
// sharing one record of what was sent directly.
type Service struct {
	b       *bus.Bus
	cfg     config.NotifyConfig
	opts    Options
	log     *slog.Logger
	direct  *Direct
	storage *storageWatch
	canary  *Canary
	repair  func(ctx context.Context, stream, consumer string) error
}

// NewService builds the delivery path of the server host on b, whose state
// directory is stateDir: the channels of cfg for direct delivery, the
// storage watch, and the canary. opts.Direct and opts.RepairConsumer are
// set by the service.
func NewService(b *bus.Bus, cfg config.NotifyConfig, opts Options, host, stateDir string, log *slog.Logger) (*Service, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rec := NewDirectRecord()
	direct, err := NewDirect(cfg, opts, rec, log.With("part", "notify"))
	if err != nil {
		return nil, err
	}
	s := &Service{b: b, cfg: cfg, log: log, direct: direct,
		storage: newStorageWatch(stateDir, host, b, log.With("part", "storage")),
		canary:  NewCanary(b, host, log.With("part", "canary"))}
	s.storage.send = direct.Deliver
	s.canary.storage = s.storage
	if b.Embedded() {
		s.repair = repairConsumer(b, s.storage)
	}
	opts.Direct, opts.RepairConsumer = rec, s.repair
	s.opts = opts
	return s, nil
}

// Path is what the rule engines deliver through (runner.Options.Delivery).
func (s *Service) Path() *Path {
	return &Path{
		Direct: func(ctx context.Context, n alert.Notification) error {
			_, err := s.direct.Deliver(ctx, n)
			return err
		},
		Storage: s.storage.report, Degraded: s.storage.degraded, Repaired: s.storage.repaired,
		RepairConsumer: s.repair,
	}
}

// Run delivers the outbox to the channels until ctx ends (Run).
func (s *Service) Run(ctx context.Context) error {
	return Run(ctx, s.b, s.cfg, s.opts, s.log.With("part", "notify"))
}

// WatchStorage decides, every few seconds until ctx ends, whether the
// storage is failing: it pages, resolves, and reloads JetStream.
func (s *Service) WatchStorage(ctx context.Context) error { return s.storage.run(ctx) }

// Canary is the health canary, whose Check also says what is wrong with
// the storage; run its Sink.
func (s *Service) Canary() *Canary { return s.canary }

// Report hears of each write by part ("facts": a collector's publish): the
// error, or nil after a success.
func (s *Service) Report(part string, err error) { s.storage.report(part, err) }

// CheckStreams looks for messages the streams lost (a damaged block is
// dropped when the server loads it) and pages what it finds; for the
// embedded bus, at start.
func (s *Service) CheckStreams(ctx context.Context) error { return checkStreams(ctx, s.b, s.storage) }

// Inventory is the feed of pools and disks to the channels that show
// them (Options.Inventory); nil when off.
func (s *Service) Inventory() *notifiers.InventoryFeed { return s.opts.Inventory }

// Close closes the connections the direct senders opened, when the daemon
// stops.
func (s *Service) Close() { s.direct.Close() }
