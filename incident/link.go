package incident

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// Answer links (answer.Link) work once: the page records each link's
// nonce in the bus's state bucket when it is used, with Create, so two
// clicks, or two servers of a fleet, cannot both use one. The records of
// links past their expiry are removed as new ones are made.

// ErrLinkUsed: the link has been used already.
var ErrLinkUsed = errors.New("this link has been used already: each answer link works once")

const linkKeyPrefix = "answer-link."

// UseLink records the use of the link with nonce, valid until expires; a
// second use gets ErrLinkUsed.
func UseLink(ctx context.Context, b *bus.Bus, nonce string, expires time.Time) error {
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return fmt.Errorf("answer link: open the state bucket: %w", err)
	}
	_, err = kv.Create(ctx, linkKeyPrefix+nonce, []byte(expires.UTC().Format(time.RFC3339)))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return ErrLinkUsed
	}
	if err != nil {
		return fmt.Errorf("answer link: record its use: %w", err)
	}
	forgetExpiredLinks(ctx, kv, time.Now())
	return nil
}

// LinkUsed reports whether the link with nonce has been used.
func LinkUsed(ctx context.Context, b *bus.Bus, nonce string) (bool, error) {
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return false, fmt.Errorf("answer link: open the state bucket: %w", err)
	}
	_, err = kv.Get(ctx, linkKeyPrefix+nonce)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("answer link: %w", err)
	}
	return true, nil
}

// forgetExpiredLinks removes the records of links that no longer work, so
// the bucket keeps only the last LinkFor's; best effort.
func forgetExpiredLinks(ctx context.Context, kv jetstream.KeyValue, now time.Time) {
	lister, err := kv.ListKeysFiltered(ctx, linkKeyPrefix+"*")
	if err != nil {
		return
	}
	for k := range lister.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		if exp, err := time.Parse(time.RFC3339, string(e.Value())); err == nil && now.After(exp) {
			_ = kv.Delete(ctx, k)
		}
	}
}
