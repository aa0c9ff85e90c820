package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/fleet/clustertest"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/webhook"
	"github.com/zwatch/zwatch/rules/runner"
)

// TestScaleBenchmark measures the partitioned rule engine on a real
// three-node NATS cluster (in process, TLS, R3 streams), side by side with
// raw JetStream on the same cluster in the same run:
//
//  1. raw: a pull consumer acking the same mix of facts from an R3 stream;
//  2. backlog drain with 1, 2 and 3 zwatch servers (rule engines of their
//     share of the partitions, notifiers): facts/s in total and per server,
//     from the servers' start and sustained, the ratio to raw, and the CPU
//     per fact;
//  3. three servers under the default intervals of every host, then a
//     burst of 10 % of the hosts degrading at once: fact -> webhook latency,
//     and how it divides between the engine, the outbox and the channel;
//  4. one server crashes (its connection drops) and comes back after a
//     while: time until the lag is back to normal after the crash (its
//     partitions move after the lease TTL) and after its return (a
//     rebalance); then every server is stopped for as long, and one
//     catches up with what waited;
//  5. the heap the three servers' engines hold per 1,000 hosts.
//
// Hosts are simulated: 16 publisher connections send each host's facts
// under its own subject (agents' connections and buffers are
// TestFleetBenchmark's). Run it with
//
//	ZWATCH_SCALE_BENCH=1 go test ./fleet -run TestScaleBenchmark -v -timeout 30m
//
// ZWATCH_SCALE_HOSTS (1000; 10000 for the full run), ZWATCH_SCALE_DISKS
// (12), ZWATCH_SCALE_FLOOD (facts in each backlog, 20000),
// ZWATCH_SCALE_LOAD_SECONDS (30), ZWATCH_SCALE_DOWN_SECONDS (30; 600 for
// "stopped for 10 minutes") and ZWATCH_SCALE_PARTITIONS (64) change the
// sizes. The defaults take about 3 minutes on 2 cores.
// ZWATCH_SCALE_NATS_SERVER (a nats-server binary: go build -o
// /tmp/nats-server github.com/nats-io/nats-server/v2) runs the nodes as
// three processes, so that their CPU and memory are measured apart.
// ZWATCH_SCALE_BURST_PROFILE (a file) takes a CPU profile of the burst.
func TestScaleBenchmark(t *testing.T) {
	if os.Getenv("ZWATCH_SCALE_BENCH") == "" {
		t.Skip("set ZWATCH_SCALE_BENCH=1 to run the scale benchmark")
	}
	hosts, disks := envInt("ZWATCH_SCALE_HOSTS", 1000), envInt("ZWATCH_SCALE_DISKS", 12)
	flood, loadFor := envInt("ZWATCH_SCALE_FLOOD", 20000), time.Duration(envInt("ZWATCH_SCALE_LOAD_SECONDS", 30))*time.Second
	downFor, parts := time.Duration(envInt("ZWATCH_SCALE_DOWN_SECONDS", 30))*time.Second, envInt("ZWATCH_SCALE_PARTITIONS", 64)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	p := loadPayloads(t)
	// The nodes run in this process, or (ZWATCH_SCALE_NATS_SERVER: a
	// nats-server binary) as three processes, so that the servers' memory
	// and CPU are measured apart from the nodes'.
	var cl *clustertest.Cluster
	var nodes *clustertest.Processes
	if bin := os.Getenv("ZWATCH_SCALE_NATS_SERVER"); bin != "" {
		nodes = clustertest.StartProcesses(t, "../configs/nats-cluster", bin)
		cl = nodes.Cluster
	} else {
		cl = clustertest.Start(t, "../configs/nats-cluster")
	}
	// cpuNow is the CPU time used so far by this process and by the nodes'
	// processes (zero when they run in this one).
	cpuNow := func() (self, nodesCPU time.Duration) {
		if nodes != nil {
			for i := range 3 {
				c, _ := nodes.CPU(i)
				nodesCPU += c
			}
		}
		return processCPU(), nodesCPU
	}
	open := func(name string) *bus.Bus {
		deadline := time.Now().Add(90 * time.Second)
		for {
			b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), URL: cl.URL(), User: clustertest.ServerUser,
				Password: clustertest.ServerPassword, TLSCA: cl.CA, Replicas: 3, Name: name, Partitions: parts,
				FactsMaxBytes: 2 << 30}, nil)
			if err == nil {
				return b
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	admin := open("bench-admin")
	defer admin.Close()
	t.Logf("machine: %d CPUs, %s; %d hosts x %d disks, %d partitions, 3-node cluster (R3)", runtime.NumCPU(), runtime.Version(), hosts, disks, parts)

	// Publishers: 16 connections, each sending for its share of hosts.
	pubs := make([]jetstream.JetStream, 16)
	for i := range pubs {
		b := open(fmt.Sprintf("bench-pub-%d", i))
		defer b.Close()
		js, err := jetstream.New(b.NC, jetstream.WithPublishAsyncMaxPending(4096))
		if err != nil {
			t.Fatal(err)
		}
		pubs[i] = js
	}
	// send publishes asynchronously; when the connection's window of
	// unacknowledged messages is full, it waits for it to empty.
	send := func(js jetstream.JetStream, subject string, msg []byte) error {
		for {
			_, err := js.PublishAsync(subject, msg)
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				return err
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	// publishUnder sends host h's fact under its subject with prefix
	// before it ("" for the facts stream, "bench." for raw JetStream's).
	publishUnder := func(prefix string, h int, kind string, data any, extra ...string) {
		msg, _ := bus.Wrap(kind, hostName(h), "bench", time.Now(), data)
		if err := send(pubs[h%len(pubs)], prefix+bus.Subject(hostName(h), kind, extra...), msg); err != nil && ctx.Err() == nil {
			t.Error(err) // also called from the load's goroutine: no Fatal
		}
	}
	publish := func(h int, kind string, data any, extra ...string) { publishUnder("", h, kind, data, extra...) }
	settle := func() {
		for _, js := range pubs {
			<-js.PublishAsyncComplete()
		}
	}
	// mixUnder publishes the i-th fact of a backlog: status 10 %,
	// heartbeat 20 %, SMART 5 %, capacity 65 %.
	mixUnder := func(prefix string, i int) {
		h := i % hosts
		switch (i / hosts) % 20 {
		case 0, 10:
			publishUnder(prefix, h, facts.ZpoolStatus.Name(), p.status)
		case 5, 11, 15, 19:
			publishUnder(prefix, h, facts.Heartbeat.Name(), facts.HeartbeatData{Version: "bench"})
		case 7:
			r := smartOf(p, h, (i/hosts/20)%disks)
			publishUnder(prefix, h, facts.Smart.Name(), r, r.Serial)
		default:
			publishUnder(prefix, h, facts.ZpoolCapacity.Name(), p.capacity)
		}
	}
	mix := func(i int) { mixUnder("", i) }

	// 1. Raw JetStream on the same cluster, with the same facts as the
	// engines' backlogs.
	if _, err := admin.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH_RAW", Subjects: []string{"bench.>"}, Storage: jetstream.FileStorage, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for i := range flood {
		mixUnder("bench.", i)
	}
	settle()
	rawPub := float64(flood) / time.Since(t0).Seconds()
	rawCons := rawConsume(ctx, t, admin.JS, "BENCH_RAW", flood)
	t.Logf("raw JetStream (R3): publish %.0f msg/s (async, 16 connections), consume+ack %.0f msg/s (one pull consumer)", rawPub, rawCons)

	// The servers.
	hook := newHook()
	defer hook.srv.Close()
	rcfg := config.DefaultRules()
	ncfg := config.DefaultNotify()
	ncfg.Console = false
	ncfg.Channels = []config.ChannelConfig{{Name: "phone", Type: "webhook", MinSeverity: "info", Settings: webhook.Config{URL: hook.srv.URL}}}
	const ttl = 6 * time.Second
	var log *slog.Logger // ZWATCH_SCALE_LOG=1: the servers' warnings on stderr
	if os.Getenv("ZWATCH_SCALE_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	type server struct {
		b      *bus.Bus
		cancel context.CancelFunc
		wg     sync.WaitGroup
	}
	start := func(name string) *server {
		s := &server{b: open(name)}
		keys := &runner.StateKeys{}
		sctx, scancel := context.WithCancel(ctx)
		s.cancel = scancel
		ps := &Partitions{JS: s.b.JS, Count: parts, Holder: name, TTL: ttl, Replicas: 3, Log: log,
			Run: func(ctx context.Context, i int) error {
				return runner.RunWith(ctx, s.b, rcfg, runner.Options{Partition: &runner.Partition{Index: i, Count: parts}, StateKeys: keys}, log)
			},
			LegacyPending: func(ctx context.Context) (bool, error) { return runner.LegacyConsumerExists(ctx, s.b.JS) },
		}
		s.wg.Go(func() { _ = ps.Lead(sctx) })
		s.wg.Go(func() { _ = delivery.Run(sctx, s.b, ncfg, delivery.Options{}, log) })
		return s
	}
	stop := func(s *server) { s.cancel(); s.wg.Wait(); s.b.Close() }
	// lag is what the partition consumers have not yet acknowledged; -1
	// while one does not exist yet or did not answer. One listing request
	// (not two per consumer): the polling should not load the cluster.
	factsStream, err := admin.JS.Stream(ctx, bus.StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	stateStream, err := admin.JS.Stream(ctx, "KV_"+bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	lag := func() int64 {
		// Bounded: a cluster between leaders may leave it unanswered.
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		defer rcancel()
		var n int64
		seen := 0
		list := factsStream.ListConsumers(rctx)
		for info := range list.Info() {
			if _, ok := runner.PartitionOfConsumer(info.Name); ok {
				n += int64(info.NumPending) + int64(info.NumAckPending)
				seen++
			}
		}
		if list.Err() != nil || seen < parts {
			return -1
		}
		return n
	}
	waitLag := func(max int64, within time.Duration) (time.Duration, bool) {
		t0 := time.Now()
		said := t0
		for time.Since(t0) < within {
			l := lag()
			if l >= 0 && l <= max {
				return time.Since(t0), true
			}
			if time.Since(said) > 30*time.Second {
				t.Logf("waiting for the lag to fall to %d: %d after %v", max, l, time.Since(t0).Round(time.Second))
				said = time.Now()
			}
			time.Sleep(200 * time.Millisecond)
		}
		return within, false
	}

	// drain waits for a backlog of total facts to be acknowledged and
	// returns how long it took from now (the servers' start: leases and
	// consumers included) and its sustained rate: the facts acknowledged
	// between the first lag read at or below 90 % of the backlog and the
	// first at or below 10 %, over the time between the two reads.
	drain := func(total int) (took time.Duration, sustained float64, ok bool) {
		t0 := time.Now()
		var at90, at10 time.Time
		var lag90, lag10 int64
		for time.Since(t0) < 15*time.Minute {
			l := lag()
			now := time.Now()
			if l >= 0 && at90.IsZero() && l <= int64(total)*9/10 {
				at90, lag90 = now, l
			}
			if l >= 0 && at10.IsZero() && l <= int64(total)/10 {
				at10, lag10 = now, l
			}
			if l == 0 {
				if at10.After(at90) {
					sustained = float64(lag90-lag10) / at10.Sub(at90).Seconds()
				}
				return now.Sub(t0), sustained, true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return time.Since(t0), 0, false
	}

	// 2. Backlog drains with 1, 2 and 3 servers, after a first drain in
	// which one server sees every host for the first time (state created,
	// not updated) and creates the partitions' consumers.
	next := 0
	for range flood {
		mix(next)
		next++
	}
	settle()
	t0 = time.Now()
	first := start("srv-1")
	if took, ok := waitLag(0, 15*time.Minute); ok {
		t.Logf("first sight: one server created %d partition consumers and %d host states and drained %d facts in %v = %.0f facts/s",
			parts, hosts, flood, took.Round(time.Millisecond), float64(flood)/took.Seconds())
	} else {
		t.Fatalf("the first backlog did not drain in %v (lag %d)", took, lag())
	}
	stop(first)
	var heapBefore runtime.MemStats
	for k := 1; k <= 3; k++ {
		t0 := time.Now()
		for range flood {
			mix(next)
			next++
		}
		settle()
		t.Logf("%d servers: backlog of %d facts published in %v", k, flood, time.Since(t0).Round(time.Millisecond))
		if k == 3 {
			runtime.GC()
			runtime.ReadMemStats(&heapBefore)
		}
		var srvs []*server
		t0 = time.Now()
		for i := range k {
			srvs = append(srvs, start(fmt.Sprintf("srv-%d", i+1)))
		}
		self0, nodes0 := cpuNow()
		took, sustained, ok := drain(flood)
		if !ok {
			t.Fatalf("%d servers: the backlog did not drain in %v (lag %d)", k, took, lag())
		}
		rate := float64(flood) / took.Seconds()
		self1, nodes1 := cpuNow()
		perFact := func(d time.Duration) time.Duration { return d / time.Duration(flood) }
		cpu := fmt.Sprintf("this process (the servers, the publishers and the NATS nodes) used %.2f cores, %v of CPU per fact",
			(self1-self0).Seconds()/took.Seconds(), perFact(self1-self0))
		if nodes != nil {
			cpu = fmt.Sprintf("this process (the servers) used %.2f cores, %v of CPU per fact; the NATS nodes %.2f cores, %v per fact",
				(self1-self0).Seconds()/took.Seconds(), perFact(self1-self0), (nodes1-nodes0).Seconds()/took.Seconds(), perFact(nodes1-nodes0))
		}
		t.Logf("%d servers: drained %d facts in %v (from the servers' start, leases included) = %.0f facts/s, %.2f of raw consume+ack; sustained (from 90 %% to 10 %% left) %.0f facts/s, %.0f per server, %.2f of raw; %s, of %d",
			k, flood, took.Round(time.Millisecond), rate, rate/rawCons, sustained, sustained/float64(k), sustained/rawCons, cpu, runtime.NumCPU())
		if k < 3 {
			for _, s := range srvs {
				stop(s)
			}
			continue
		}

		// 5. Heap held with every host's state loaded (three servers in
		// this process, beside the three NATS nodes' own heap).
		var heapAfter runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&heapAfter)
		grown := float64(int64(heapAfter.HeapInuse)-int64(heapBefore.HeapInuse)) / (1 << 20)
		if nodes == nil {
			t.Logf("heap in use with %d hosts loaded on 3 servers: %+.1f MiB over just before they started = %.1f MiB per 1,000 hosts (in one process with the 3 NATS nodes: includes what the nodes added while the backlog drained)",
				hosts, grown, grown/(float64(hosts)/1000))
		} else {
			var nodeRSS []string
			for i := range 3 {
				rss, _ := nodes.RSS(i)
				nodeRSS = append(nodeRSS, fmt.Sprintf("%.0f", float64(rss)/(1<<20)))
			}
			t.Logf("heap in use with %d hosts loaded on 3 servers: %+.1f MiB over just before they started = %.1f MiB per 1,000 hosts for the three; this process: heap %.1f MiB in use, %.1f MiB from the OS; NATS nodes' RSS %s MiB",
				hosts, grown, grown/(float64(hosts)/1000), float64(heapAfter.HeapInuse)/(1<<20), float64(heapAfter.Sys)/(1<<20), strings.Join(nodeRSS, " / "))
		}

		// 3. Default intervals, then 10 % of the hosts degrade at once.
		loadCtx, stopLoad := context.WithCancel(ctx)
		var published atomic.Uint64
		var loadWG sync.WaitGroup
		loadWG.Go(func() { defaultLoad(loadCtx, hosts, disks, p, publish, &published) })
		time.Sleep(loadFor / 2)
		// The lag, and the writes to the state bucket (its stream's last
		// sequence): on average, and in the busiest stretch between two
		// samples, where hosts' states written together show.
		var maxLag int64
		var busiest float64
		stateWrites := func() (uint64, bool) {
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			defer rcancel()
			info, err := stateStream.Info(rctx)
			if err != nil {
				return 0, false
			}
			return info.State.LastSeq, true
		}
		var firstWrites, lastWrites uint64
		var firstAt, lastAt time.Time // zero until a reading answered
		sample := func(d time.Duration) {
			for t0 := time.Now(); time.Since(t0) < d; time.Sleep(500 * time.Millisecond) {
				if l := lag(); l > maxLag {
					maxLag = l
				}
				w, ok := stateWrites()
				if !ok {
					continue
				}
				now := time.Now()
				if firstAt.IsZero() {
					firstWrites, firstAt = w, now
				} else {
					busiest = max(busiest, float64(w-lastWrites)/now.Sub(lastAt).Seconds())
				}
				lastWrites, lastAt = w, now
			}
		}
		sample(loadFor / 2)
		rate = float64(published.Load()) / loadFor.Seconds()
		var meanWrites float64
		if lastAt.After(firstAt) {
			meanWrites = float64(lastWrites-firstWrites) / lastAt.Sub(firstAt).Seconds()
		}
		t.Logf("default intervals: %.0f facts/s published; lag at most %d facts; host states written %.0f/s on average over %v, %.0f/s at the busiest",
			rate, maxLag, meanWrites, lastAt.Sub(firstAt).Round(time.Second), busiest)
		// ZWATCH_SCALE_BURST_PROFILE: a CPU profile of this process from the
		// burst until its last page, to see what the latency is made of.
		if path := os.Getenv("ZWATCH_SCALE_BURST_PROFILE"); path != "" {
			if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
				defer f.Close()
				defer pprof.StopCPUProfile()
			}
		}
		burstCPU, burstAt := processCPU(), time.Now()
		burst := map[string]time.Time{}
		rnd := rand.New(rand.NewPCG(3, 4))
		for _, h := range rnd.Perm(hosts)[:hosts/10] {
			burst[hostName(h)] = time.Now()
			publish(h, facts.ZpoolStatus.Name(), p.degraded)
		}
		settle()
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) && hook.count(keys(burst)) < len(burst) {
			time.Sleep(100 * time.Millisecond)
		}
		var lat []time.Duration
		for h, at := range burst {
			if got, ok := hook.first(h); ok {
				lat = append(lat, got.Sub(at))
			}
		}
		pprof.StopCPUProfile()
		burstCores := (processCPU() - burstCPU).Seconds() / time.Since(burstAt).Seconds()
		slices.Sort(lat)
		if len(lat) < len(burst) {
			t.Errorf("burst: %d of %d hosts never paged", len(burst)-len(lat), len(burst))
		}
		if len(lat) > 0 {
			t.Logf("burst of %d hosts degrading at once: fact -> webhook p50 %v, p99 %v, max %v; this process used %.2f of %d cores meanwhile",
				len(burst), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), burstCores, runtime.NumCPU())
			if alerts, err := admin.JS.Stream(ctx, bus.StreamAlerts); err == nil {
				t.Logf("burst, where the time went: %s", latencySplit(ctx, alerts, hook, burst))
			}
		}

		// 4. A server crashes under the load and comes back later. "Back
		// to normal": the lag within one second of the load.
		normal := int64(rate) + 64
		waitLag(normal, time.Minute)
		srvs[2].b.NC.Close()
		crashed := time.Now()
		time.Sleep(ttl) // its leases run out; meanwhile its partitions' facts wait
		if _, ok := waitLag(normal, 5*time.Minute); ok {
			t.Logf("crash of one of 3 servers under load: its partitions moved and the lag was back to normal %v after the crash (lease TTL %v)",
				time.Since(crashed).Round(time.Millisecond), ttl)
		} else {
			t.Errorf("the lag did not come back after a crash (lag %d)", lag())
		}
		stop(srvs[2])
		time.Sleep(downFor)
		back := time.Now()
		srvs[2] = start("srv-3")
		time.Sleep(2 * time.Second) // the others hand partitions over in their next rounds
		if _, ok := waitLag(normal, 5*time.Minute); ok {
			t.Logf("server back after %v down: rebalanced, lag back to normal %v after its start", downFor, time.Since(back).Round(time.Millisecond))
		} else {
			t.Errorf("the lag did not come back after the rebalance (lag %d)", lag())
		}

		// 6. Every server stopped for a while under the load (an outage
		// of the servers, or of the only one), then one starts: how long
		// it takes to catch up with what waited.
		for _, s := range srvs {
			stop(s)
		}
		time.Sleep(downFor)
		waiting := lag()
		back = time.Now()
		srvs = []*server{start("srv-1")}
		if _, ok := waitLag(normal, 15*time.Minute); ok {
			took := time.Since(back)
			t.Logf("every server stopped for %v under the load: one server caught up with %d facts in %v from its start",
				downFor, waiting, took.Round(time.Millisecond))
		} else {
			t.Errorf("one server did not catch up after %v down (lag %d)", downFor, lag())
		}
		stopLoad()
		loadWG.Wait()
		for _, s := range srvs {
			stop(s)
		}
	}
}

// defaultLoad publishes every host's facts at the default intervals
// (zpool list 10 s, zpool status 1 m, heartbeat 30 s, SMART 30 m per
// disk), each with a random phase, until ctx ends.
func defaultLoad(ctx context.Context, hosts, disks int, p benchPayloads, publish func(int, string, any, ...string), n *atomic.Uint64) {
	start := time.Now()
	rnd := rand.New(rand.NewPCG(1, 2))
	type due struct{ list, status, hb time.Time }
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
	for ctx.Err() == nil {
		now := time.Now()
		for h := range hosts {
			d := &next[h]
			if !now.Before(d.list) {
				publish(h, facts.ZpoolCapacity.Name(), p.capacity)
				d.list = d.list.Add(10 * time.Second)
				n.Add(1)
			}
			if !now.Before(d.status) {
				publish(h, facts.ZpoolStatus.Name(), p.status)
				d.status = d.status.Add(time.Minute)
				n.Add(1)
			}
			if !now.Before(d.hb) {
				publish(h, facts.Heartbeat.Name(), facts.HeartbeatData{Version: "bench"})
				d.hb = d.hb.Add(30 * time.Second)
				n.Add(1)
			}
			for k := range disks {
				if !now.Before(smartNext[h][k]) {
					r := smartOf(p, h, k)
					publish(h, facts.Smart.Name(), r, r.Serial)
					smartNext[h][k] = smartNext[h][k].Add(30 * time.Minute)
					n.Add(1)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// processCPU is the CPU time this process has used (user and system): the
// NATS nodes, the servers and the publishers together.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
