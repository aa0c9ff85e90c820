package rules

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/model/alert"
)

// The scenario replays real outputs of one FreeBSD pool (upool, Dec 2025):
// healthy → gpt/usb2 UNAVAIL (shown by GUID, "was /dev/gpt/usb2") →
// replacing-2 resilvering onto gpt/usb5 → ONLINE. No real output of upool
// ONLINE after that replacement exists in testdata, so the last step reuses
// its real ONLINE output from before (gpt/usb0..3); to the rules it is the
// same fact: every device ONLINE, nothing resilvering.
var upoolSteps = []struct {
	file string
	at   time.Duration
}{
	{"zpool-status/freebsd-raidz1-gpt-label-online.txt", 0},
	{"zpool-status/freebsd-raidz1-guid-unavail-was-dev.txt", time.Minute},
	{"zpool-status/freebsd-raidz1-replacing-guid-was-dev-resilvering.txt", 3 * time.Minute},
	{"zpool-status/freebsd-raidz1-gpt-label-online.txt", 8 * time.Minute},
}

// What a person gets: three notifications, nothing twice.
var upoolWant = []string{
	"firing critical RedundancyMargin: upool/raidz1-0 has no redundancy left",
	"firing critical VdevState: gpt/usb2 in upool/raidz1-0 is UNAVAIL: raidz1-0 has no redundancy left",
	"firing warning PoolState: pool upool is DEGRADED: gpt/usb2 UNAVAIL",
	"--",
	"firing info Resilver: pool upool is resilvering: 11.7% done, about 53s to go",
	"--",
	"resolved critical RedundancyMargin: upool/raidz1-0 has no redundancy left",
	"resolved critical VdevState: gpt/usb2 in upool/raidz1-0 is UNAVAIL: raidz1-0 has no redundancy left",
	"resolved warning PoolState: pool upool is DEGRADED: gpt/usb2 UNAVAIL",
	"resolved info Resilver: pool upool: resilver finished",
	"--",
}

// runUpool plays the steps, ticking every second for six hours after the
// first (long enough for a critical repeat to show if one were wrongly due
// — repeats are 4 h, and the alerts resolve at 8 min). restart, when set,
// is called after step restartAfter's observation, before its flush, and
// returns the engine to continue with.
func runUpool(t *testing.T, restartAfter int, restart func(*Engine) *Engine) []alert.Notification {
	e := newTestEngine()
	var out []alert.Notification
	step := 0
	end := 6 * time.Hour
	for d := time.Duration(0); d <= end; d += time.Second {
		now := t0.Add(d)
		if step < len(upoolSteps) && upoolSteps[step].at == d {
			observe(t, e, statusEnv(t, upoolSteps[step].file, now), now)
			if step == restartAfter && restart != nil {
				e = restart(e)
			}
			step++
		}
		out = append(out, e.Tick(now)...)
	}
	return out
}

func TestScenarioUpoolReplacement(t *testing.T) {
	got := runUpool(t, -1, nil)
	sameList(t, noteLines(got), upoolWant)
	for _, n := range got {
		if n.GroupKey != "host=nas1,pool=upool" || n.Host != testHost || n.ID == "" {
			t.Errorf("notification %+v", n)
		}
	}
	// The disk alert carries the replacement context.
	for _, a := range got[0].Alerts {
		if a.Name == nameVdevState {
			r := a.Replacement
			if r == nil || r.Pool != "upool" || r.TopVdev != "raidz1-0" || r.VdevGUID != "16031226974783295807" || r.Was != "/dev/gpt/usb2" || r.Margin == nil || *r.Margin != 0 {
				t.Errorf("replacement %+v", r)
			}
		}
	}
}

// A restart in the middle — the new engine loads what the old one saved in
// a real embedded NATS KV bucket — changes nothing a person sees, down to
// the notification IDs (so JetStream would drop a re-publish).
func TestScenarioRestartChangesNothing(t *testing.T) {
	ctx := context.Background()
	_, kv := openStateBucket(ctx, t)
	want := runUpool(t, -1, nil)
	for restartAfter := 1; restartAfter <= 3; restartAfter++ {
		restart := func(old *Engine) *Engine {
			if err := old.Save(ctx, kv); err != nil {
				t.Fatal(err)
			}
			e := newTestEngine()
			if err := e.Load(ctx, kv); err != nil {
				t.Fatal(err)
			}
			return e
		}
		got := runUpool(t, restartAfter, restart)
		if len(got) != len(want) {
			t.Fatalf("restart after step %d: %d notifications, want %d:\n%s", restartAfter, len(got), len(want), strings.Join(noteLines(got), "\n"))
		}
		for i := range got {
			if got[i].ID != want[i].ID || !got[i].Created.Equal(want[i].Created) {
				t.Errorf("restart after step %d: notification %d id %s at %s, want %s at %s", restartAfter, i, got[i].ID, got[i].Created, want[i].ID, want[i].Created)
			}
		}
		sameList(t, noteLines(got), upoolWant)
		purge(t, ctx, kv)
	}
}

func purge(t *testing.T, ctx context.Context, kv jetstream.KeyValue) {
	l, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k := range l.Keys() {
		if err := kv.Purge(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
}
