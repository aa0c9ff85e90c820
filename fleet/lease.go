package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/internal/clock"
)

// LeaseBucket is the key-value bucket holding leases; each key expires
// (bucket MaxAge) when its holder stops renewing it.
const LeaseBucket = "zwatch_leases"

// RulesLease names the lease the rule engine runs under.
const RulesLease = "rules"

// DefaultLeaseTTL is how long a lease outlives its last renewal.
const DefaultLeaseTTL = 15 * time.Second

// Lead runs fn only while this process holds the lease name in LeaseBucket,
// and blocks until ctx ends.
//
// Why: the rule engine keeps each host's latest facts in memory and writes
// its state with optimistic concurrency, so two engines sharing the "rules"
// consumer would each judge a host from half of its facts (a heartbeat seen
// by one engine is missing in the other, which then declares the host
// silent). With Lead, one server evaluates and the others stand by; the
// durable consumer and the state bucket carry the work over when it fails.
//
// The holder renews every ttl/3 and stops fn when it has not renewed for
// 2/3·ttl; the key expires ttl after the last renewal, so two holders never
// overlap while the NATS servers' clocks run at the same rate.
func Lead(ctx context.Context, js jetstream.JetStream, name, holder string, ttl time.Duration, replicas int, log *slog.Logger, fn func(ctx context.Context) error) error {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kv, err := LeaseKV(ctx, js, ttl, replicas)
	if err != nil {
		return err
	}
	every := ttl / 3
	announced := false
	for ctx.Err() == nil {
		rev, err := kv.Create(ctx, name, []byte(holder))
		switch {
		case err == nil:
			log.Info("lease acquired: this server is active", "lease", name, "holder", holder)
			announced = false
			if err := hold(ctx, kv, name, holder, rev, ttl, log, fn); err != nil {
				return err
			}
			continue
		case errors.Is(err, jetstream.ErrKeyExists):
			if !announced {
				cur := "?"
				if e, gerr := kv.Get(ctx, name); gerr == nil {
					cur = string(e.Value())
				}
				log.Info("lease held elsewhere: standing by", "lease", name, "holder", cur)
				announced = true
			}
		case ctx.Err() == nil:
			log.Warn("lease: cannot reach the bucket", "lease", name, "err", err)
		}
		_ = clock.Sleep(ctx, every)
	}
	return nil
}

// Leaser is Lead for js and holder, as delivery.Options.Lease takes it:
// each channel's answer reader of a shared account runs under its own
// lease (delivery.AnswerLease), so a fleet reads one bot, login or number
// once, and another server takes it over within ttl of the holder dying.
func Leaser(js jetstream.JetStream, holder string, ttl time.Duration, replicas int, log *slog.Logger) func(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	return func(ctx context.Context, name string, fn func(ctx context.Context) error) error {
		return Lead(ctx, js, name, holder, ttl, replicas, log, fn)
	}
}

// LeaseKV opens (creating if needed) the lease bucket.
func LeaseKV(ctx context.Context, js jetstream.JetStream, ttl time.Duration, replicas int) (jetstream.KeyValue, error) {
	if replicas < 1 {
		replicas = 1
	}
	kv, err := js.KeyValue(ctx, LeaseBucket)
	if err == nil {
		return kv, nil
	}
	err = bus.RetryAPI(ctx, func(ctx context.Context) error {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: LeaseBucket, TTL: ttl, History: 1, Replicas: replicas, Storage: jetstream.FileStorage,
			Description: "zwatch leases: which server runs the rule engine and each answer reader",
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lease bucket %s: %w", LeaseBucket, err)
	}
	return kv, nil
}

// hold runs fn while renewing; it returns nil when the lease is lost (the
// caller competes again) or ctx ended, and fn's error otherwise.
func hold(ctx context.Context, kv jetstream.KeyValue, name, holder string, rev uint64, ttl time.Duration, log *slog.Logger, fn func(ctx context.Context) error) error {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(lctx) }()
	renewed := time.Now()
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	release := func() {
		// Let another server take over at once instead of after ttl.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer rcancel()
		_ = kv.Delete(rctx, name, jetstream.LastRevision(rev))
	}
	for {
		select {
		case err := <-done:
			release()
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = errors.New("returned without error")
			}
			return fmt.Errorf("lease %s: %w", name, err)
		case <-ctx.Done():
			<-done
			release()
			return nil
		case <-t.C:
			rctx, rcancel := context.WithTimeout(lctx, ttl/3)
			nrev, err := kv.Update(rctx, name, []byte(holder), rev)
			rcancel()
			if err == nil {
				rev, renewed = nrev, time.Now()
				continue
			}
			lost := errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound)
			if !lost && time.Since(renewed) < 2*ttl/3 {
				log.Warn("lease not renewed; retrying", "lease", name, "err", err)
				continue
			}
			log.Warn("lease lost: stopping until it is won again", "lease", name, "err", err)
			cancel()
			<-done
			return nil
		}
	}
}
