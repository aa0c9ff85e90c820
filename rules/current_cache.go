package rules

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zwatch/zwatch/bus"
)

// CurrentCache keeps the last ReadCurrent and reads the state bucket again
// only when it changed. The alerts snapshot asks every 5 s and the status
// page and /metrics on every request; reading and decoding every host's
// state and building an engine for it was a third of an idle daemon's
// garbage (docs/benchmarks.md), for a bucket the rules write a few times
// a minute at most. Host states and silences live in the one bucket, so
// its stream's sequences tell any change of either. Safe for concurrent
// use; the zero value is ready.
type CurrentCache struct {
	mu  sync.Mutex
	key currentKey
	cur *Current
}

type currentKey struct{ first, last, msgs uint64 }

// Read is ReadCurrent through c (nil: no cache). A cached state is
// returned with Now set to this call's time: silences start and end by
// the clock, not by a write.
func (c *CurrentCache) Read(ctx context.Context, b *bus.Bus) (*Current, error) {
	if c == nil {
		return ReadCurrent(ctx, b)
	}
	// The key is read before the state: a write in between makes the next
	// call read again, never keeps a state older than its key.
	st, err := b.JS.Stream(ctx, "KV_"+bus.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("read rule state from %s: %w", bus.StateBucket, err)
	}
	s := st.CachedInfo().State
	key := currentKey{first: s.FirstSeq, last: s.LastSeq, msgs: s.Msgs}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil || c.key != key {
		cur, err := ReadCurrent(ctx, b)
		if err != nil {
			return nil, err
		}
		c.key, c.cur = key, cur
	}
	// The engine and the silences are only read from here on.
	return &Current{e: c.cur.e, silences: c.cur.silences, now: time.Now()}, nil
}
