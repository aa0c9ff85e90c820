package statusview_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// TestRecentCache: the cache answers what RecentFromOutbox reads, canaries
// left out, without reading again while the outbox has not moved, and reads
// again once a notification is added or n changes.
func TestRecentCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := viewtest.OpenBus(ctx, t)
	publish := func(id string) {
		t.Helper()
		n := alert.Notification{ID: id, Host: "nas1", Status: alert.Firing, Created: time.Now().UTC()}
		data, err := bus.WrapSchema(bus.SchemaNotification, n.Host, "rules", n.Created, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, bus.Subject(n.Host, bus.KindAlert), data); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(notes []alert.Notification) string {
		s := ""
		for _, n := range notes {
			s += n.ID + " "
		}
		return s
	}
	var c statusview.RecentCache
	if notes, _, err := c.Read(ctx, b.JS, 3); err != nil || len(notes) != 0 {
		t.Fatalf("empty outbox: %v %v", ids(notes), err)
	}
	for _, id := range []string{"n1", delivery.CanaryPrefix + "x", "n2", "n3", "n4"} {
		publish(id)
	}
	first, seqs, err := c.Read(ctx, b.JS, 3)
	if err != nil || ids(first) != "n2 n3 n4 " || fmt.Sprint(seqs) != "[3 4 5]" {
		t.Fatalf("last 3 messages, the canary left out: %q %v %v", ids(first), seqs, err)
	}
	plain, plainSeqs, err := statusview.RecentFromOutbox(ctx, b.JS, 3)
	if err != nil || ids(plain) != ids(first) || fmt.Sprint(plainSeqs) != fmt.Sprint(seqs) {
		t.Fatalf("without the cache: %q %v %v", ids(plain), plainSeqs, err)
	}
	again, _, err := c.Read(ctx, b.JS, 3)
	if err != nil || &again[0] != &first[0] {
		t.Fatalf("the outbox did not move, yet it was read again (%v)", err)
	}
	publish("n5")
	moved, _, err := c.Read(ctx, b.JS, 3)
	if err != nil || ids(moved) != "n3 n4 n5 " {
		t.Fatalf("after n5: %q %v", ids(moved), err)
	}
	if wider, _, err := c.Read(ctx, b.JS, 5); err != nil || ids(wider) != "n2 n3 n4 n5 " {
		t.Fatalf("n 5: %q %v", ids(wider), err)
	}
}
