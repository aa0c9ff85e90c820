// Package clock holds time helpers that respect a context, so a loop that
// waits between polls stops as soon as it is cancelled.
package clock

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, whichever comes first. It returns
// ctx.Err() when ctx ended first and nil when d passed; callers that only
// wait may ignore it and check ctx themselves.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
