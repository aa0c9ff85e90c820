package notifiers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// shelf is a channel type of this test whose sender wants the inventory
// and holds a connection: what the MQTT channel implements, without a
// broker.
type shelfConfig struct{ rec *shelf }

func (shelfConfig) Validate(string, *config.Errors) {}
func (shelfConfig) HasLiteralSecret() bool          { return false }
func (c shelfConfig) NewSender(channel.Env) (channel.Sender, error) {
	return c.rec, nil
}

type shelf struct {
	mu     sync.Mutex
	got    []channel.Inventory
	fail   int // SetInventory calls still to refuse
	closed bool
	seen   chan struct{}
}

func (s *shelf) Send(context.Context, channel.Message) error { return nil }

func (s *shelf) SetInventory(_ context.Context, inv channel.Inventory) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return errors.New("broker away")
	}
	s.got = append(s.got, inv)
	s.seen <- struct{}{}
	return nil
}

func (s *shelf) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// TestInventoryReachesTheChannelsThatWantIt: the feed's inventory reaches a
// sender that implements channel.InventoryReceiver, after a refusal too;
// the firing alerts are cut to the channel's min_severity and route; an
// inventory that says nothing new is not handed again; the sender is closed
// when Run ends.
func TestInventoryReachesTheChannelsThatWantIt(t *testing.T) {
	rec := &shelf{fail: 1, seen: make(chan struct{}, 10)}
	cfg := notifytest.NotifyConfig(config.ChannelConfig{Name: "shelf", Type: "shelf", MinSeverity: "critical",
		Route: config.RouteConfig{Pools: []string{"vault"}}, Settings: shelfConfig{rec: rec}})
	cfg.RetryInitial = config.Duration(100 * time.Millisecond)
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	feed := notifiers.NewInventoryFeed()
	stop := notifytest.RunNotifiers(t, b, cfg, delivery.Options{Inventory: feed})

	firing := func(name, pool string, sev alert.Severity) alert.Alert {
		return alert.Alert{Name: name, Severity: sev, State: alert.Firing, Labels: map[string]string{"pool": pool}}
	}
	inv := channel.Inventory{Self: "nas1", At: time.Now(), Hosts: []channel.HostInventory{{Host: "nas1",
		Pools:  []channel.InventoryPool{{Name: "vault", State: "DEGRADED"}, {Name: "tank", State: "ONLINE"}},
		Firing: []alert.Alert{firing("ZpoolDegraded", "vault", alert.Critical), firing("Capacity", "vault", alert.Warning), firing("ZpoolDegraded", "tank", alert.Critical)},
	}}}
	feed.Set(inv)
	select {
	case <-rec.seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the inventory did not reach the channel")
	}
	if !feed.Wanted() {
		t.Error("the feed does not know a channel reads it")
	}
	again := inv
	again.At = time.Now().Add(time.Minute)
	feed.Set(again)
	select {
	case <-rec.seen:
		t.Error("an inventory that says nothing new was handed again")
	case <-time.After(500 * time.Millisecond):
	}
	stop()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.got) != 1 || len(rec.got[0].Hosts) != 1 || len(rec.got[0].Hosts[0].Pools) != 2 {
		t.Fatalf("got %+v", rec.got)
	}
	if f := rec.got[0].Hosts[0].Firing; len(f) != 1 || f[0].Name != "ZpoolDegraded" || f[0].Labels["pool"] != "vault" {
		t.Errorf("firing alerts not cut to the channel's filter: %+v", f)
	}
	if !rec.closed {
		t.Error("the sender was not closed when Run ended")
	}
	if feed.Wanted() {
		t.Error("the feed is still wanted after Run ended")
	}
}
