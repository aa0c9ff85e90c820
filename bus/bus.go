package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options says how to reach the bus. With URL empty, an embedded server is
// started with JetStream under StateDir.
type Options struct {
	StateDir string
	// Listen opens a client listener (host:port) on the embedded server so
	// that agents on other machines can publish to it; every client must
	// then authenticate (AuthPath). Empty: in-process only.
	Listen string
	// LocalListen, without Listen, still lets this machine's own commands
	// (zwatch forget-pool) reach the running daemon: the embedded server
	// listens on a free loopback port, every client authenticates as with
	// Listen, and the address is written to LocalURLPath(StateDir).
	LocalListen bool
	// ListenTLSCert and ListenTLSKey are the listener's PEM certificate and
	// key; required unless Listen is a loopback address.
	ListenTLSCert string
	ListenTLSKey  string
	// URL of an external NATS server or cluster; no embedded server then.
	URL       string
	CredsFile string
	User      string
	Password  string
	TLSCA     string
	TLSCert   string
	TLSKey    string
	// TLSPinCert, for a client: accept only the server certificate in
	// this PEM file (LocalClient), instead of a chain to TLSCA.
	TLSPinCert string
	// Replicas for the streams and bucket (1 on one machine, 3 in a cluster).
	Replicas int
	// Name is the client connection name, shown by NATS monitoring.
	Name string
	// FactsMaxAge and FactsMaxBytes bound the facts stream, the buffer
	// between agents and the rule engine; alerts keep AlertsMaxAge.
	FactsMaxAge   time.Duration
	FactsMaxBytes int64
	AlertsMaxAge  time.Duration
	// HistoryMaxBytes is what the history's streams may hold together on
	// the embedded store (0: history off); the store's limit counts it.
	HistoryMaxBytes int64

	// FactSubjects are the subjects of the facts stream (facts.StreamSubjects);
	// required unless NoStreams.
	FactSubjects []string
	// Partitions splits the facts stream by host (partition.go): 0 keeps
	// the existing stream's layout (none for a new one), 1 is none, n > 1
	// is n partitions. An existing partitioned stream is never changed.
	Partitions int

	// NoStreams skips creating the streams and the state bucket: an agent
	// only publishes, and its NATS user may not use the JetStream API.
	NoStreams bool
	// InboxPrefix replaces _INBOX for reply subjects (JetStream publish
	// acks), so an agent's permissions can allow _INBOX_<host>.> only.
	InboxPrefix string
	// ReconnectBufSize bounds what nats.go keeps while reconnecting
	// (bytes; 0: its default of 8 MiB, -1: none).
	ReconnectBufSize int
	// ReconnectHook, when set, is called on every reconnect.
	ReconnectHook func()
}

// Bus is a connection to NATS with JetStream, and the embedded server when
// there is one.
type Bus struct {
	NC     *nats.Conn
	JS     jetstream.JetStream
	server *embedded
	log    *slog.Logger
	// partitions is the facts stream's partition count once known (0
	// before): FactFilter maps subjects to how the stream stores them.
	partitions int32 // atomic: a Bus may be copied (tests)
}

// Open starts the embedded server if needed, connects, and makes sure the
// streams and the state bucket exist.
func Open(ctx context.Context, o Options, log *slog.Logger) (*Bus, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bus{log: log}
	var opts []nats.Option
	opts = append(opts, nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.SyncQueueLen(syncQueueLen),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("bus disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("bus reconnected", "url", nc.ConnectedUrlRedacted())
			if o.ReconnectHook != nil {
				o.ReconnectHook()
			}
		}))
	if o.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(o.InboxPrefix))
	}
	if o.ReconnectBufSize != 0 {
		opts = append(opts, nats.ReconnectBufSize(o.ReconnectBufSize))
	}
	url := o.URL
	if url == "" {
		e, err := startEmbedded(o, log, StoreSpace)
		if err != nil {
			return nil, err
		}
		b.server = e
		opts = append(opts, nats.InProcessServer(e.srv))
		if e.auth != nil {
			opts = append(opts, nats.UserInfo(e.auth.Server.User, e.auth.Server.Password))
		}
	} else {
		if o.CredsFile != "" {
			opts = append(opts, nats.UserCredentials(o.CredsFile))
		}
		if o.User != "" {
			opts = append(opts, nats.UserInfo(o.User, o.Password))
		}
		if o.TLSCA != "" {
			opts = append(opts, nats.RootCAs(o.TLSCA))
		}
		if o.TLSCert != "" || o.TLSKey != "" {
			opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
		}
		if o.TLSPinCert != "" {
			tc, err := pinnedTLS(o.TLSPinCert)
			if err != nil {
				return nil, err
			}
			opts = append(opts, nats.Secure(tc))
		}
		opts = append(opts, nats.RetryOnFailedConnect(true))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		b.shutdownServer()
		return nil, fmt.Errorf("connect to NATS %s: %w", describe(url), err)
	}
	b.NC = nc
	// An asynchronous publish whose acknowledgement never comes (the
	// answer lost in a node's failure) fails after this long, instead of
	// waiting in the client for ever.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(30*time.Second))
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	b.JS = js
	if o.NoStreams {
		return b, nil
	}
	if err := b.ensureStreams(ctx, o); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func describe(url string) string {
	if url == "" {
		return "(embedded)"
	}
	return url
}

// CheckWritable makes dir if needed and proves a file can be written in it.
func CheckWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("state directory %s cannot be created: %w (create it, or point --state-dir at a writable directory; the default /var/lib/zwatch needs root)", dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		return fmt.Errorf("state directory %s is not writable: %w (fix its owner/permissions, or point --state-dir at a writable directory)", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func (b *Bus) ensureStreams(ctx context.Context, o Options) error {
	rep := o.Replicas
	if rep < 1 {
		rep = 1
	}
	factsAge, alertsAge := o.FactsMaxAge, o.AlertsMaxAge
	sizes := b.Sizes(o)
	factsBytes := sizes.Facts
	if factsAge <= 0 {
		factsAge = 24 * time.Hour
	}
	if alertsAge <= 0 {
		// Longer than the 7-day retry window of the outbox.
		alertsAge = 30 * 24 * time.Hour
	}
	if len(o.FactSubjects) == 0 {
		return fmt.Errorf("create stream %s: no subjects given (bus.Options.FactSubjects, from facts.StreamSubjects)", StreamFacts)
	}
	streams := []jetstream.StreamConfig{
		{
			Name: StreamFacts, Subjects: o.FactSubjects, Storage: jetstream.FileStorage,
			MaxAge: factsAge, MaxBytes: factsBytes, Discard: jetstream.DiscardOld, Replicas: rep,
			AllowDirect: true, // the views' batched reads (direct.go)
			Description: "zwatch collector messages (buffer between agents and the rule engine)",
		},
		{
			Name: StreamAlerts, Subjects: AlertSubjects, Storage: jetstream.FileStorage,
			MaxAge: alertsAge, MaxBytes: sizes.Alerts, Discard: jetstream.DiscardOld, Replicas: rep,
			AllowDirect: true,
			Description: "zwatch notifications (durable outbox: one consumer per channel)",
		},
	}
	parts, err := b.factLayout(ctx, o.Partitions)
	if err != nil {
		return err
	}
	if parts > 1 {
		streams[0].SubjectTransform = PartitionTransform(parts)
	}
	for _, cfg := range streams {
		cfg := cfg
		if err := RetryAPI(ctx, func(ctx context.Context) error {
			_, err := b.JS.CreateOrUpdateStream(ctx, cfg)
			return err
		}); err != nil {
			return fmt.Errorf("create stream %s: %w", cfg.Name, err)
		}
	}
	if err := RetryAPI(ctx, func(ctx context.Context) error {
		_, err := b.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: StateBucket, Storage: jetstream.FileStorage, Replicas: rep, History: 1,
			Description: "zwatch rule engine state",
		})
		return err
	}); err != nil {
		return fmt.Errorf("create key-value bucket %s: %w", StateBucket, err)
	}
	atomic.StoreInt32(&b.partitions, int32(parts))
	return nil
}

// factLayout decides the facts stream's partition count from the existing
// stream (if any) and what this process wants.
func (b *Bus) factLayout(ctx context.Context, want int) (int, error) {
	if want > MaxPartitions {
		return 0, fmt.Errorf("fleet.partitions %d: at most %d", want, MaxPartitions)
	}
	var existing *jetstream.StreamConfig
	err := RetryAPI(ctx, func(ctx context.Context) error {
		s, err := b.JS.Stream(ctx, StreamFacts)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil
		}
		if err == nil {
			cfg := s.CachedInfo().Config
			existing = &cfg
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("look up stream %s: %w", StreamFacts, err)
	}
	if existing == nil {
		return max(want, 1), nil
	}
	if want == 0 {
		return PartitionsOf(*existing)
	}
	if err := checkPartitions(*existing, want); err != nil {
		return 0, err
	}
	return want, nil
}

// Partitions is the facts stream's partition count (1: not partitioned),
// read from the stream the first time.
func (b *Bus) Partitions(ctx context.Context) (int, error) {
	if n := atomic.LoadInt32(&b.partitions); n > 0 {
		return int(n), nil
	}
	n, err := FactPartitions(ctx, b.JS)
	if err != nil {
		return 0, err
	}
	atomic.StoreInt32(&b.partitions, int32(n))
	return n, nil
}

// FactFilter is StoredFilter for this bus's facts stream: what to ask the
// stream for to read facts published on subject (a filter may hold '*').
func (b *Bus) FactFilter(ctx context.Context, subject string) (string, error) {
	n, err := b.Partitions(ctx)
	if err != nil {
		return "", err
	}
	return StoredFilter(subject, n), nil
}

// RetryAPI calls a JetStream API function with a short timeout per try and
// retries for up to a minute: a cluster that is still electing its meta
// leader, or another server creating the same stream at the same moment,
// answers late or not at all to the first requests.
func RetryAPI(ctx context.Context, fn func(context.Context) error) error {
	ctx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	wait := 250 * time.Millisecond
	for {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := fn(tctx)
		cancel()
		if err == nil {
			return nil
		}
		if apiErr, ok := errors.AsType[*jetstream.APIError](err); ok && apiErr.ErrorCode == errCodeStorageExceeded {
			return fmt.Errorf("%w (the bus store's filesystem is full, or its limit bus.facts_max_mb is above what is free: free space or lower the limit)", err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(wait*2, 2*time.Second)
	}
}

// Publish sends an enveloped message, through JetStream when the subject is
// stored so that the publisher learns the bus accepted it.
func (b *Bus) Publish(ctx context.Context, subject string, msg []byte) error {
	if _, err := b.JS.Publish(ctx, subject, msg); err != nil {
		return fmt.Errorf("publish %s: %w", subject, err)
	}
	return nil
}

// Sizes are the streams' bounds: fitted to the state filesystem for the
// embedded server, as o asks for an external one.
func (b *Bus) Sizes(o Options) StoreSizes {
	if b.server != nil {
		return b.server.sizes
	}
	return wantedSizes(o)
}

// DeadLetterMaxBytes bounds the dead-letter stream on this bus.
func (b *Bus) DeadLetterMaxBytes() int64 {
	if b.server != nil {
		return b.server.sizes.DeadLetter
	}
	return DeadLetterMaxBytes
}

// Embedded reports whether this process runs the NATS server.
func (b *Bus) Embedded() bool { return b.server != nil }

// ClientURL is the embedded server's listener, or "" without one.
func (b *Bus) ClientURL() string {
	if b.server == nil || b.server.srv.Addr() == nil {
		return ""
	}
	return b.server.srv.ClientURL()
}

// closeReconnectWait is how long Close gives a reconnecting connection to
// reach another node: ReconnectWait (1s) and a TLS handshake.
const closeReconnectWait = 3 * time.Second

// Close drains the connection (in-flight messages are delivered) and shuts
// the embedded server down cleanly so JetStream files are consistent. A
// connection that is reconnecting — the cluster node it was on has just
// failed — first gets closeReconnectWait to reach another: nats.go's Drain
// closes a reconnecting connection at once and drops what it buffered,
// which includes the outbox's hand-back of the notifications it still held
// (they would wait for AckWait) and its acknowledgements. With nothing
// buffered it does not wait.
func (b *Bus) Close() {
	if b.NC != nil {
		deadline := time.Now().Add(closeReconnectWait)
		for b.NC.IsReconnecting() && time.Now().Before(deadline) {
			// Nothing buffered, nothing to lose: a client that never
			// reached a server (zwatch check on a dead bus) ends at once.
			if n, err := b.NC.Buffered(); err != nil || n == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := b.NC.Drain(); err == nil {
			deadline := time.Now().Add(5 * time.Second)
			for !b.NC.IsClosed() && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		b.NC.Close()
	}
	b.shutdownServer()
}

func (b *Bus) shutdownServer() {
	if b.server != nil {
		b.server.shutdown()
		b.server = nil
	}
}
