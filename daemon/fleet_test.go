package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/fleet/clustertest"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/rules"
)

// fleetAgent is what `zwatch run --role agent` runs, with a heartbeat every
// 500ms instead of 30s so that the silent-host rule can be tested quickly:
// the real zpool collectors (replaying captured OpenZFS 2.3.2 outputs)
// publishing through the agent's bounded buffer over TLS as its own user.
type fleetAgent struct {
	host   string
	step   string // the stand-in's step file: setStep changes the scenario
	b      *bus.Bus
	buf    *fleet.Buffer
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// clusterAgent is how an agent reaches the test cluster: TLS, its own user.
func clusterAgent(cl *clustertest.Cluster, host string) bus.Options {
	return bus.Options{URL: cl.URL(), User: host, Password: clustertest.AgentPassword(host), TLSCA: cl.CA}
}

// startFleetAgent runs host's agent on the bus conn names (URL, user, TLS).
func startFleetAgent(t *testing.T, conn bus.Options, host, scenario string) *fleetAgent {
	t.Helper()
	zpool, zfsCmd, step := standInZpool(t, filepath.Join(t.TempDir()))
	setStep(t, step, scenario)
	a := &fleetAgent{host: host, step: step}
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	var err error
	o := conn
	o.NoStreams, o.InboxPrefix, o.Name = true, bus.AgentInbox(host), "agent@"+host
	o.ReconnectHook = func() {
		if a.buf != nil {
			a.buf.Wake()
		}
	}
	a.b, err = bus.Open(ctx, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.buf = fleet.NewBuffer(a.b, host, 1000, nil)
	runner := execx.New(10 * time.Second)
	log := slog.New(slog.DiscardHandler)
	a.done.Go(func() { _ = a.buf.Run(ctx) })
	a.done.Go(func() {
		collectors.Loop(ctx, &collectors.ZpoolList{Runner: runner, Zpool: zpool, Zfs: zfsCmd}, a.buf, time.Second, nil, log)
	})
	a.done.Go(func() {
		collectors.Loop(ctx, &collectors.ZpoolStatus{Runner: runner, Zpool: zpool}, a.buf, time.Second, nil, log)
	})
	a.done.Go(func() {
		started := time.Now()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			_ = a.buf.Publish(ctx, facts.Heartbeat.Name(), "zwatch", facts.HeartbeatData{Version: "test", Started: started})
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	t.Cleanup(a.stop)
	return a
}

func (a *fleetAgent) stop() {
	if a.cancel == nil {
		return
	}
	a.cancel()
	a.done.Wait()
	a.b.Close()
	a.cancel = nil
}

// fleetServer is `zwatch run --role server` (daemon.Run itself).
type fleetServer struct {
	cancel context.CancelFunc
	done   chan error
}

func startFleetServer(t *testing.T, cl *clustertest.Cluster, name, hookURL string) *fleetServer {
	t.Helper()
	cfgText := fmt.Sprintf(`
host: %s
role: server
state_dir: %s
bus:
  url: %q
  user: %s
  password: %s
  tls:
    ca: %s
  replicas: 3
rules:
  group_wait: 0s
fleet:
  lease_ttl: 3s
notify:
  console: false
  channels:
    - name: phone
      type: webhook
      url: %s
      min_severity: info
`, name, t.TempDir(), cl.URL(), clustertest.ServerUser, clustertest.ServerPassword, cl.CA, hookURL)
	l, err := config.Parse(strings.NewReader(cfgText), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	// Below the configurable minimum (30s), so the test stays short; the
	// agents' heartbeat comes every 500ms.
	rules.SetSilentAfter(&l.Config.Rules, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	s := &fleetServer{cancel: cancel, done: make(chan error, 1)}
	var log *slog.Logger
	if os.Getenv("ZWATCH_FLEET_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil)).With("server", name)
	} else {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	go func() { s.done <- Run(ctx, &l.Config, Options{}, log) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *fleetServer) stop(t *testing.T) {
	if s.cancel == nil {
		return
	}
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("server Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("server did not stop")
	}
	s.cancel = nil
}

// TestFleetClusterNoLossNoDuplicates runs zwatch as a fleet on a real
// three-node NATS cluster with JetStream (the shipped configs of
// configs/nats-cluster: TLS, per-host users and permissions, replicas 3):
// three agents, two servers sharing the work. One NATS node is stopped and
// restarted mid-test and the active server is stopped (its standby takes
// over). Every notification in the outbox reaches the webhook, none twice
// beyond the outbox's at-most-one repeat; an agent cannot publish as
// another host; and the agent that stops raises "host silent".
func TestFleetClusterNoLossNoDuplicates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	start := time.Now()
	cl := clustertest.Start(t, "../configs/nats-cluster")
	ph := testutil.NewPhone[notifiers.WebhookPayload](t)

	// Create the streams first: JetStream elects its meta leader, and a
	// request sent before that gets no answer.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var admin *bus.Bus
	for {
		octx, c := context.WithTimeout(ctx, 5*time.Second)
		b, err := bus.Open(octx, bus.Options{FactSubjects: facts.StreamSubjects(), URL: cl.URL(), User: clustertest.ServerUser, Password: clustertest.ServerPassword,
			TLSCA: cl.CA, Replicas: 3, Name: "test-admin"}, nil)
		c()
		if err == nil {
			admin = b
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	defer admin.Close()
	t.Logf("%v: streams ready", time.Since(start).Round(time.Millisecond))
	srvA := startFleetServer(t, cl, "srv-a", ph.URL)

	nas1 := startFleetAgent(t, clusterAgent(cl, "nas1"), "nas1", "a")          // healthy
	nas2 := startFleetAgent(t, clusterAgent(cl, "nas2"), "nas2", "b1-offline") // a disk OFFLINE
	nas3 := startFleetAgent(t, clusterAgent(cl, "nas3"), "nas3", "c1-removed") // a disk REMOVED

	// Permissions: nas1 cannot publish as nas2, nor an alert.
	for _, subj := range []string{bus.Subject("nas2", facts.Heartbeat.Name()), bus.Subject("nas1", bus.KindAlert)} {
		pctx, c := context.WithTimeout(ctx, 2*time.Second)
		msg, _ := bus.Wrap(facts.Heartbeat.Name(), "nas2", "zwatch", time.Now(), facts.HeartbeatData{})
		if err := nas1.b.Publish(pctx, subj, msg); err == nil {
			t.Errorf("agent nas1 could publish on %s", subj)
		}
		c()
	}

	isHost := func(h string) func(notifiers.WebhookPayload) bool {
		return func(p notifiers.WebhookPayload) bool { return p.Host == h && p.Status == "firing" }
	}
	ph.Wait(t, "nas2 firing", isHost("nas2"))
	ph.Wait(t, "nas3 firing", isHost("nas3"))
	t.Logf("%v: first alerts delivered", time.Since(start).Round(time.Millisecond))
	// The second server starts once the first made its streams: two servers
	// creating the same new R3 stream at once both wait out their request
	// timeout (15 s) on this nats-server, which only slows the test down.
	srvB := startFleetServer(t, cl, "srv-b", ph.URL)
	_ = srvB
	time.Sleep(time.Second)

	// A NATS node fails while agents keep publishing, and the active
	// server stops: the standby takes the rule engine over.
	cl.Stop(1)
	srvA.stop(t)
	time.Sleep(4 * time.Second)
	cl.Restart(t, 1)
	t.Logf("%v: node 2 back", time.Since(start).Round(time.Millisecond))
	srvA = startFleetServer(t, cl, "srv-a", ph.URL)
	_ = srvA

	// nas3 stops reporting entirely.
	nas3.stop()
	stopped := time.Now()
	silent := ph.Wait(t, "nas3 silent", func(p notifiers.WebhookPayload) bool {
		return p.Host == "nas3" && p.Status == "firing" && hasAlert(p.Notification, "HostSilent")
	})
	t.Logf("%v: nas3 silent alert %v after it stopped: %s", time.Since(start).Round(time.Millisecond), time.Since(stopped).Round(time.Second), silent.Summary)

	// Drain: every notification in the outbox reaches the phone.
	outbox := outboxIDs(t, ctx, admin)
	deadline := time.Now().Add(15 * time.Second)
	for {
		var missing []string
		for id, what := range outbox {
			if ph.Count(func(p notifiers.WebhookPayload) bool { return p.ID == id }) == 0 {
				missing = append(missing, what)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d outbox notifications never delivered: %s", len(missing), len(outbox), strings.Join(missing, "; "))
		}
		time.Sleep(300 * time.Millisecond)
		outbox = outboxIDs(t, ctx, admin)
	}
	time.Sleep(time.Second)
	outbox = outboxIDs(t, ctx, admin)
	got := ph.Received()
	byID := map[string]int{}
	var repeats []string
	for _, p := range got {
		byID[p.ID]++
		if byID[p.ID] == 2 {
			repeats = append(repeats, p.ID)
		}
		if byID[p.ID] > 2 {
			t.Errorf("notification %s delivered %d times", p.ID, byID[p.ID])
		}
		if _, ok := outbox[p.ID]; !ok {
			t.Errorf("delivered %s (%s %s) is not in the outbox", p.ID, p.Status, p.Summary)
		}
		if (p.Host == "nas1" || p.Host == "nas2") && hasAlert(p.Notification, "HostSilent") {
			t.Errorf("live host reported silent: %s", p.Summary)
		}
	}
	total := len(got)
	// The same incident told twice under different ids would be a duplicate
	// the outbox cannot catch: one firing notice per host's first incident.
	for _, h := range []string{"nas2", "nas3"} {
		firstFiring := ph.Count(func(p notifiers.WebhookPayload) bool {
			return p.Host == h && p.Status == "firing" && !hasAlert(p.Notification, "HostSilent")
		})
		if firstFiring != 1 {
			t.Errorf("%s: %d firing notifications for one incident, want 1", h, firstFiring)
		}
	}
	if n := ph.Count(func(p notifiers.WebhookPayload) bool { return p.Host == "nas1" && p.Status == "firing" }); n != 0 {
		t.Errorf("healthy nas1 paged %d times", n)
	}
	if len(repeats) > 0 {
		t.Logf("at-most-one repeats (allowed): %v", repeats)
	}
	st := nas1.buf.Stats()
	t.Logf("%v: %d notifications in the outbox, %d deliveries; nas1 buffer: %+v", time.Since(start).Round(time.Millisecond), len(outbox), total, st)
	if st.Dropped != 0 || st.Sent == 0 {
		t.Errorf("nas1 buffer %+v", st)
	}

	// The fleet view sees all three agents and the servers.
	var hosts []fleet.HostView
	if err := bus.RetryAPI(ctx, func(ctx context.Context) (err error) {
		hosts, err = fleet.Fleet(ctx, admin.JS)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]fleet.HostView{}
	for _, h := range hosts {
		seen[h.Host] = h
	}
	for _, h := range []string{"nas1", "nas2", "nas3"} {
		v, ok := seen[h]
		if !ok || v.LastHeartbeat == nil || len(v.Pools) == 0 || v.Buffer == nil {
			t.Errorf("fleet view of %s: %+v", h, v)
		}
	}
	if v := seen["nas2"]; !hasPoolState(v, "DEGRADED") {
		t.Errorf("nas2 pools %+v", v.Pools)
	}
	if age := seen["nas3"].Age(time.Now()); age < 5*time.Second {
		t.Errorf("nas3 heartbeat age %v", age)
	}
	var active []alert.Alert
	if err := bus.RetryAPI(ctx, func(ctx context.Context) (err error) {
		active, err = rules.Active(ctx, admin)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	activeHosts := map[string]bool{}
	for _, a := range active {
		activeHosts[a.Labels["host"]] = true
	}
	if !activeHosts["nas2"] || !activeHosts["nas3"] {
		t.Errorf("rules.Active hosts %v", activeHosts)
	}
	_ = nas2
	if d := time.Since(start); d > 75*time.Second {
		t.Errorf("test took %v", d)
	}
}

func hasAlert(n alert.Notification, name string) bool {
	for _, a := range n.Alerts {
		if a.Name == name {
			return true
		}
	}
	return false
}

func hasPoolState(v fleet.HostView, state string) bool {
	for _, p := range v.Pools {
		if p.State == state {
			return true
		}
	}
	return false
}

// outboxIDs reads every notification in the outbox stream: its id, and
// for a failure message what it was (sequence, time, host, status, alert
// names, id). A cluster that
// just lost and regained a node may answer a JetStream API request with "no
// responders" while it elects a leader, so the read is retried as zwatch's
// own setup is (bus.RetryAPI).
func outboxIDs(t *testing.T, ctx context.Context, b *bus.Bus) map[string]string {
	t.Helper()
	var ids map[string]string
	err := bus.RetryAPI(ctx, func(ctx context.Context) error {
		ids = map[string]string{}
		cons, err := b.JS.OrderedConsumer(ctx, bus.StreamAlerts, jetstream.OrderedConsumerConfig{})
		if err != nil {
			return err
		}
		st, err := b.JS.Stream(ctx, bus.StreamAlerts)
		if err != nil {
			return err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		for range info.State.Msgs {
			m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
			if err != nil {
				return err
			}
			var n alert.Notification
			if _, err := bus.Decode(m.Data(), "notification", &n); err != nil {
				t.Fatal(err)
			}
			meta, err := m.Metadata()
			if err != nil {
				return err
			}
			var names []string
			for _, a := range n.Alerts {
				names = append(names, a.Name)
			}
			ids[n.ID] = fmt.Sprintf("seq %d at %s: %s %s %v (%s)", meta.Sequence.Stream, meta.Timestamp.Format("15:04:05.000"), n.Host, n.Status, names, n.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
