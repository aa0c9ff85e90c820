package incident_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/incident"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// A link works once, also when two uses race (two clicks, two servers);
// the records of expired links are removed when the next link is used.
func TestUseLinkOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := viewtest.OpenBus(ctx, t)
	nonce := "0123456789abcdef01234567"
	if used, err := incident.LinkUsed(ctx, b, nonce); err != nil || used {
		t.Fatalf("fresh link: used %v, %v", used, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = incident.UseLink(ctx, b, nonce, time.Now().Add(time.Hour)) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, incident.ErrLinkUsed):
			t.Errorf("UseLink: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d of 8 racing uses succeeded, want 1", ok)
	}
	if used, err := incident.LinkUsed(ctx, b, nonce); err != nil || !used {
		t.Errorf("after its use: used %v, %v", used, err)
	}

	old := "fedcba9876543210fedcba98"
	if err := incident.UseLink(ctx, b, old, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := incident.UseLink(ctx, b, "00000000000000000000000a", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "answer-link."+old); err == nil {
		t.Error("the expired link's record is still there")
	}
}
