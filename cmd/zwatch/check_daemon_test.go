package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/rules"
)

// With the embedded bus, --from-daemon reads the snapshot the daemon
// rewrites every 5 s: none, or a stale one, is UNKNOWN; a fresh one gives
// the same verdict as judging the outputs its alerts came from (on the
// host they name; another host's are marked with its name).
func TestCheckFromDaemonSnapshot(t *testing.T) {
	state := t.TempDir()
	cfgText := fmt.Sprintf("host: %s\nstate_dir: %s\n", rules.EvalHost, state)
	cfg := writeConfig(t, cfgText)

	out, errOut, code := run(t, "-c", cfg, "check", "--from-daemon")
	if code != 3 || !strings.HasPrefix(out, "ZWATCH UNKNOWN - no zwatch daemon: "+state+"/alerts.json does not exist") || errOut != "" {
		t.Fatalf("no daemon: exit %d, %q %q", code, out, errOut)
	}

	files := []string{captured + "c4-missing.zpool-status-j.json", captured + "c4-missing.zpool-list-Hp.txt"}
	ev, err := rules.EvalFilesAt(files, config.DefaultRules(), checkNow)
	if err != nil {
		t.Fatal(err)
	}
	write := func(r daemon.AlertsReport) {
		t.Helper()
		if err := daemon.WriteSnapshot(state, r); err != nil {
			t.Fatal(err)
		}
	}
	write(daemon.AlertsReport{GeneratedAt: time.Now().Add(-5 * time.Minute), Active: ev.Alerts})
	out, _, code = run(t, "-c", cfg, "check", "--from-daemon")
	if code != 3 || !strings.Contains(out, "alerts.json is 5m0s old: zwatch run is not running, or is stuck") {
		t.Fatalf("stale snapshot: exit %d, %q", code, out)
	}

	write(daemon.AlertsReport{GeneratedAt: time.Now(), Active: ev.Alerts})
	daemonOut, _ := checkRun(t, cfgText, checkOptions{fromDaemon: true})
	inputOut, _ := checkRun(t, "", checkOptions{inputs: files})
	if daemonOut.State != "CRITICAL" || daemonOut.Text != inputOut.Text || strings.Join(daemonOut.Long, "\n") != strings.Join(inputOut.Long, "\n") {
		t.Fatalf("the daemon's alerts read\n%s - %s\n%s\nwhile the outputs give\n%s - %s\n%s", daemonOut.State, daemonOut.Text,
			strings.Join(daemonOut.Long, "\n"), inputOut.State, inputOut.Text, strings.Join(inputOut.Long, "\n"))
	}
	wantPerf(t, daemonOut, "alerts_critical", "3;;0;0;")
	wantPerf(t, daemonOut, "alerts_warning", "3;0;;0;")
	if p, ok := daemonOut.perf("snapshot_age"); !ok || p.UOM != "s" || p.Crit != "60" {
		t.Errorf("snapshot_age: %+v", p)
	}

	serverOut, _ := checkRun(t, fmt.Sprintf("host: srv1\nstate_dir: %s\n", state), checkOptions{fromDaemon: true})
	if want := "eval: pool vault is DEGRADED: "; !strings.HasPrefix(serverOut.Text, want) || !strings.HasPrefix(serverOut.Long[0], "WARNING: "+want) {
		t.Errorf("another host's alerts do not name it:\n%s\n%s", serverOut.Text, strings.Join(serverOut.Long, "\n"))
	}

	write(daemon.AlertsReport{GeneratedAt: time.Now()})
	out, _, code = run(t, "-c", cfg, "check", "--from-daemon")
	if code != 0 || !strings.HasPrefix(out, "ZWATCH OK - no alerts firing | alerts_critical=0;;0;0 alerts_warning=0;0;;0 alerts_info=0;;;0 snapshot_age=") {
		t.Fatalf("no alerts: exit %d, %q", code, out)
	}
}

// With bus.listen, --from-daemon reads the daemon's rule state from its
// running embedded bus (a real NATS server with JetStream), and its
// heartbeat says the daemon is alive.
func TestCheckFromDaemonBus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state, addr := t.TempDir(), freeAddr(t)
	cfgText := fmt.Sprintf("host: srv1\nstate_dir: %s\nbus:\n  listen: %s\nnotify:\n  console: false\n", state, addr)
	cfgPath := writeConfig(t, cfgText)
	l, err := config.Load(cfgPath, catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.Open(ctx, daemon.BusOptions(&l.Config), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	// The rule engine's state, as the daemon saves it, after the pool of
	// the c4 capture lost two disks on srv1.
	ev, err := rules.EvalFilesAt([]string{captured + "c4-missing.zpool-status-j.json"}, l.Config.Rules, checkNow)
	if err != nil {
		t.Fatal(err)
	}
	e := rules.NewEngine(l.Config.Rules, nil)
	for _, env := range ev.Facts {
		env.Host = "srv1"
		if err := e.Observe(env, checkNow); err != nil {
			t.Fatal(err)
		}
	}
	e.Tick(checkNow.Add(25 * time.Hour))
	kv, err := srv.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}

	po, r := checkRun(t, cfgText, checkOptions{fromDaemon: true, timeout: "20"})
	if r.State != stateUnknown || !strings.HasPrefix(po.Text, "zwatch on srv1 has sent no heartbeat to the bus") {
		t.Fatalf("no heartbeat yet: %s - %s", po.State, po.Text)
	}

	msg, err := bus.Wrap(facts.Heartbeat.Name(), "srv1", "zwatch", time.Now(), facts.HeartbeatData{Version: "test", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Publish(ctx, bus.Subject("srv1", facts.Heartbeat.Name()), msg); err != nil {
		t.Fatal(err)
	}
	po, r = checkRun(t, cfgText, checkOptions{fromDaemon: true, timeout: "20"})
	if r.State != stateCritical || !strings.HasPrefix(po.Text, "pool vault is DEGRADED: ") {
		t.Fatalf("%s - %s\n%s", po.State, po.Text, strings.Join(po.Long, "\n"))
	}
	wantPerf(t, po, "alerts_critical", "3;;0;0;")
	if p, ok := po.perf("heartbeat_age"); !ok || p.UOM != "s" {
		t.Errorf("heartbeat_age: %+v", p)
	}
}

// A bus nobody answers on is UNKNOWN within the bound, and the password
// in bus.url is not printed.
func TestCheckFromDaemonNoBus(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	po, r := checkRun(t, fmt.Sprintf("bus:\n  url: nats://watcher:s3cret-pw@%s\n", addr), checkOptions{fromDaemon: true, timeout: "2"})
	if r.State != stateUnknown || po.Text != "no zwatch daemon answers on the bus: no NATS server at nats://xxxxx@"+addr+" answered in time" {
		t.Fatalf("%s - %s", po.State, po.Text)
	}
	if took := time.Since(start); took > 2*time.Second+time.Second {
		t.Fatalf("took %s with -t 2", took)
	}
}
