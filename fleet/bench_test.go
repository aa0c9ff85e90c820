package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/webhook"
	"github.com/zwatch/zwatch/rules/runner"
)

const captured = "../testdata/captured/zfs-2.3.2/"

type benchPayloads struct {
	status, degraded facts.StatusData
	capacity         facts.CapacityData
	smart            *smart.Report
}

func loadPayloads(t *testing.T) benchPayloads {
	t.Helper()
	open := func(name string) *os.File {
		f, err := os.Open(captured + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	var p benchPayloads
	pools, err := zfs.ParseStatusText(open("a.zpool-status-p-P.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p.status = facts.StatusData{Source: "text", Pools: pools}
	if pools, err = zfs.ParseStatusText(open("b1-offline.zpool-status-p-P.txt")); err != nil {
		t.Fatal(err)
	}
	p.degraded = facts.StatusData{Source: "text", Pools: pools}
	pl, err := zfs.ParseListColumns(open("a.zpool-list-Hp.txt"), zfs.DefaultListColumns)
	if err != nil {
		t.Fatal(err)
	}
	p.capacity = facts.CapacityData{Pools: pl}
	if p.smart, err = smart.Parse(open("a.smartctl-a-json-ata.json")); err != nil {
		t.Fatal(err)
	}
	return p
}

func smartOf(p benchPayloads, host, disk int) smart.Report {
	r := *p.smart
	r.Serial = fmt.Sprintf("SIM%04dD%02d", host, disk)
	r.Device = fmt.Sprintf("/dev/sd%c", 'a'+disk)
	return r
}

// TestFleetBenchmark measures zwatch on one NATS server (JetStream, file
// storage) and one zwatch server (rule engine under its lease, notifiers
// with a webhook), with simulated hosts each on its own connection and its
// own agent buffer. Run it with:
//
//	ZWATCH_FLEET_BENCH=1 go test ./fleet -run TestFleetBenchmark -v -timeout 20m
//
// ZWATCH_BENCH_HOSTS (1000), ZWATCH_BENCH_DISKS (12), ZWATCH_BENCH_SECONDS
// (60) and ZWATCH_BENCH_FLOOD (20000) change the sizes.
func TestFleetBenchmark(t *testing.T) {
	if os.Getenv("ZWATCH_FLEET_BENCH") == "" {
		t.Skip("set ZWATCH_FLEET_BENCH=1 to run the fleet benchmark")
	}
	hosts, disks := envInt("ZWATCH_BENCH_HOSTS", 1000), envInt("ZWATCH_BENCH_DISKS", 12)
	seconds, flood := envInt("ZWATCH_BENCH_SECONDS", 60), envInt("ZWATCH_BENCH_FLOOD", 20000)
	ctx, cancel := context.WithTimeout(context.Background(), 18*time.Minute)
	defer cancel()
	p := loadPayloads(t)
	port := freePort(t)
	srv := startNATS(t, port, t.TempDir())
	defer srv.Shutdown()
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	admin, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), URL: url, Name: "bench-admin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	sizes := map[string]int{}
	for k, v := range map[string]any{"status": p.status, "capacity": p.capacity, "smart": smartOf(p, 0, 0), "heartbeat": facts.HeartbeatData{Version: "bench"}} {
		b, _ := bus.Wrap(k, "host0000", "bench", time.Now(), v)
		sizes[k] = len(b)
	}
	t.Logf("machine: %d CPUs, %s; envelope bytes: %v", runtime.NumCPU(), runtime.Version(), sizes)

	// The flood mix: what one host sends in 30 minutes at the default
	// intervals, scaled down: 13 capacity, 4 heartbeats, 2 status, 1 SMART.
	mix := func(host, i int) (kind string, data any, extra []string) {
		switch i % 20 {
		case 0, 10:
			return facts.ZpoolStatus.Name(), p.status, nil
		case 5, 11, 15, 19:
			return facts.Heartbeat.Name(), facts.HeartbeatData{Version: "bench"}, nil
		case 7:
			r := smartOf(p, host, (i/20)%disks)
			return facts.Smart.Name(), r, []string{r.Serial}
		default:
			return facts.ZpoolCapacity.Name(), p.capacity, nil
		}
	}

	// 1. Raw NATS on the same server: async JetStream publish of the same
	// envelopes to a stream of its own, then a pull consumer acking each.
	msgs := make([][]byte, 0, flood)
	subjects := make([]string, 0, flood)
	for i := range flood {
		h := i % hosts
		kind, data, extra := mix(h, i/hosts)
		b, _ := bus.Wrap(kind, hostName(h), "bench", time.Now(), data)
		msgs = append(msgs, b)
		subjects = append(subjects, "bench."+bus.Subject(hostName(h), kind, extra...))
	}
	if _, err := admin.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH_RAW", Subjects: []string{"bench.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(admin.NC, jetstream.WithPublishAsyncMaxPending(flood+1))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for i := range msgs {
		if _, err := js.PublishAsync(subjects[i], msgs[i], jetstream.WithMsgID(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	<-js.PublishAsyncComplete()
	rawPub := float64(flood) / time.Since(t0).Seconds()
	rawCons := rawConsume(ctx, t, admin.JS, "BENCH_RAW", flood)
	t.Logf("raw NATS JetStream: publish %.0f msg/s (async), consume+ack %.0f msg/s", rawPub, rawCons)

	// 2. The agents: one connection and one Buffer per host.
	bufs := make([]*Buffer, hosts)
	conns := make([]*bus.Bus, hosts)
	actx, stopAgents := context.WithCancel(ctx)
	var agents sync.WaitGroup
	defer func() {
		stopAgents()
		agents.Wait()
		for _, c := range conns {
			if c != nil {
				c.NC.Close()
			}
		}
	}()
	t0 = time.Now()
	for h := range hosts {
		b, err := bus.Open(ctx, bus.Options{URL: url, NoStreams: true, InboxPrefix: "_INBOX_" + hostName(h), Name: hostName(h)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		conns[h] = b
		bufs[h] = NewBuffer(b, hostName(h), DefaultBuffer, nil)
		agents.Go(func() { _ = bufs[h].Run(actx) })
	}
	t.Logf("%d agent connections in %v", hosts, time.Since(t0).Round(time.Millisecond))
	sent := func() (n uint64) {
		for _, b := range bufs {
			n += b.Stats().Sent
		}
		return n
	}
	t0 = time.Now()
	for i := range flood {
		h := i % hosts
		kind, data, extra := mix(h, i/hosts)
		_ = bufs[h].Publish(ctx, kind, "bench", data, extra...)
	}
	for sent() < uint64(flood) {
		time.Sleep(5 * time.Millisecond)
	}
	agentPub := float64(flood) / time.Since(t0).Seconds()
	t.Logf("agents (Buffer, one ack at a time per host): publish %.0f msg/s = %.2f of raw async publish", agentPub, agentPub/rawPub)

	// 3. The zwatch server: rule engine under the lease, notifiers.
	hook := newHook()
	defer hook.srv.Close()
	sctx, stopServer := context.WithCancel(ctx)
	var server sync.WaitGroup
	defer func() { stopServer(); server.Wait() }()
	rcfg := config.DefaultRules()
	ncfg := config.DefaultNotify()
	ncfg.Console = false
	ncfg.Channels = []config.ChannelConfig{{Name: "phone", Type: "webhook", MinSeverity: "info", Settings: webhook.Config{URL: hook.srv.URL}}}
	t0 = time.Now()
	server.Go(func() {
		_ = Lead(sctx, admin.JS, RulesLease, "bench", DefaultLeaseTTL, 1, nil, func(ctx context.Context) error {
			return runner.Run(ctx, admin, rcfg, nil)
		})
	})
	server.Go(func() { _ = delivery.Run(sctx, admin, ncfg, delivery.Options{}, nil) })
	lag := func() (pending uint64) {
		c, err := admin.JS.Consumer(ctx, bus.StreamFacts, runner.ConsumerName)
		if err != nil {
			return ^uint64(0)
		}
		info, err := c.Info(ctx)
		if err != nil {
			return ^uint64(0)
		}
		return info.NumPending + uint64(info.NumAckPending)
	}
	for lag() != 0 {
		time.Sleep(20 * time.Millisecond)
	}
	rulesRate := float64(flood) / time.Since(t0).Seconds()
	t.Logf("rule engine backlog of %d (first sight of %d hosts): %.0f msg/s = %.2f of raw consume+ack", flood, hosts, rulesRate, rulesRate/rawCons)

	// 4. Realistic load: every host at the default intervals (zpool list
	// 10s, zpool status 1m, heartbeat 30s, SMART 30m per disk), random
	// phases; every 3s one host's disk goes OFFLINE, timed to the webhook.
	type due struct{ list, status, hb time.Time }
	start := time.Now()
	rnd := rand.New(rand.NewPCG(1, 2))
	next := make([]due, hosts)
	smartNext := make([][]time.Time, hosts)
	phase := func(d time.Duration) time.Time { return start.Add(time.Duration(rnd.Int64N(int64(d)))) }
	for h := range hosts {
		next[h] = due{phase(10 * time.Second), phase(time.Minute), phase(30 * time.Second)}
		smartNext[h] = make([]time.Time, disks)
		for d := range disks {
			smartNext[h][d] = phase(30 * time.Minute)
		}
	}
	var published atomic.Uint64
	degradedAt := map[string]time.Time{}
	var mu sync.Mutex
	var maxLag uint64
	lagDone := make(chan struct{})
	go func() {
		defer close(lagDone)
		for time.Since(start) < time.Duration(seconds)*time.Second {
			if l := lag(); l != ^uint64(0) && l > maxLag {
				maxLag = l
			}
			time.Sleep(500 * time.Millisecond)
		}
	}()
	before := sent()
	flip := 0
	nextFlip := start.Add(5 * time.Second)
	for now := time.Now(); now.Sub(start) < time.Duration(seconds)*time.Second; now = time.Now() {
		for h := range hosts {
			n := &next[h]
			if !now.Before(n.list) {
				_ = bufs[h].Publish(ctx, facts.ZpoolCapacity.Name(), "zpool_list", p.capacity)
				n.list = n.list.Add(10 * time.Second)
				published.Add(1)
			}
			if !now.Before(n.status) {
				_ = bufs[h].Publish(ctx, facts.ZpoolStatus.Name(), "zpool_status", p.status)
				n.status = n.status.Add(time.Minute)
				published.Add(1)
			}
			if !now.Before(n.hb) {
				_ = bufs[h].Publish(ctx, facts.Heartbeat.Name(), "zwatch", facts.HeartbeatData{Version: "bench"})
				n.hb = n.hb.Add(30 * time.Second)
				published.Add(1)
			}
			for d := range disks {
				if !now.Before(smartNext[h][d]) {
					r := smartOf(p, h, d)
					_ = bufs[h].Publish(ctx, facts.Smart.Name(), "smart", r, r.Serial)
					smartNext[h][d] = smartNext[h][d].Add(30 * time.Minute)
					published.Add(1)
				}
			}
		}
		if !now.Before(nextFlip) && now.Sub(start) < time.Duration(seconds-5)*time.Second {
			h := (flip*97 + 13) % hosts
			flip++
			mu.Lock()
			degradedAt[hostName(h)] = time.Now()
			mu.Unlock()
			_ = bufs[h].Publish(ctx, facts.ZpoolStatus.Name(), "zpool_status", p.degraded)
			published.Add(1)
			nextFlip = nextFlip.Add(3 * time.Second)
			// Keep it degraded: its later status polls send the same.
			next[h].status = next[h].status.Add(time.Hour)
		}
		time.Sleep(20 * time.Millisecond)
	}
	<-lagDone
	elapsed := time.Since(start)
	// Wait for the last flips' pages.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && hook.count(keys(degradedAt)) < len(degradedAt) {
		time.Sleep(50 * time.Millisecond)
	}
	var lat []time.Duration
	for h, at := range degradedAt {
		if got, ok := hook.first(h); ok {
			lat = append(lat, got.Sub(at))
		}
	}
	slices.Sort(lat)
	acked := sent() - before
	t.Logf("realistic load, %d hosts x %d disks for %v: %d messages published, %d acknowledged = %.1f msg/s sustained; rule engine lag max %d messages",
		hosts, disks, elapsed.Round(time.Second), published.Load(), acked, float64(acked)/elapsed.Seconds(), maxLag)
	if len(lat) > 0 {
		t.Logf("end-to-end alert latency (agent publish -> webhook), %d of %d incidents: min %v p50 %v max %v",
			len(lat), len(degradedAt), lat[0].Round(time.Millisecond), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	}
	if len(lat) < len(degradedAt) {
		t.Errorf("%d of %d incidents never paged", len(degradedAt)-len(lat), len(degradedAt))
	}
	t.Logf("headroom: the rule engine's backlog rate is %.0fx the realistic %d-host load", rulesRate/(float64(acked)/elapsed.Seconds()), hosts)
}

// rawConsume drains stream's n messages the way the rule engine pulls them
// (an iterator of 64, each decoded and acked), deletes the stream, and
// returns the rate: the raw NATS figure the benchmarks compare with.
func rawConsume(ctx context.Context, t *testing.T, js jetstream.JetStream, stream string, n int) float64 {
	t.Helper()
	rc, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: "raw", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	it, err := rc.Messages(jetstream.PullMaxMessages(64))
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		m, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		var env bus.Envelope
		_ = json.Unmarshal(m.Data(), &env) // the least a consumer does
		_ = m.Ack()
	}
	it.Stop()
	rate := float64(n) / time.Since(t0).Seconds()
	_ = js.DeleteStream(ctx, stream)
	return rate
}

func hostName(h int) string { return fmt.Sprintf("host%04d", h) }

func keys(m map[string]time.Time) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

type hook struct {
	srv *httptest.Server
	mu  sync.Mutex
	at  map[string]time.Time
	// page is each host's first firing notification, for where its time
	// went (the engine's Created, the outbox's timestamp of its ID).
	page map[string]alert.Notification
}

func newHook() *hook {
	h := &hook{at: map[string]time.Time{}, page: map[string]alert.Notification{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		body, _ := io.ReadAll(r.Body)
		var p notifiers.WebhookPayload
		if json.Unmarshal(body, &p) == nil && p.Status == "firing" {
			h.mu.Lock()
			if _, ok := h.at[p.Host]; !ok {
				h.at[p.Host] = now
				h.page[p.Host] = p.Notification
			}
			h.mu.Unlock()
		}
	}))
	return h
}

func (h *hook) first(host string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.at[host]
	return t, ok
}

// notification is host's first firing notification, as the hook received it.
func (h *hook) notification(host string) (alert.Notification, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n, ok := h.page[host]
	return n, ok
}

func (h *hook) count(hosts []string) int {
	n := 0
	for _, x := range hosts {
		if _, ok := h.first(x); ok {
			n++
		}
	}
	return n
}
