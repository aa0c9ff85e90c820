package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/catalog"
)

// openDaemonBus opens the embedded bus the way `zwatch run` does, with its
// loopback listener for this machine's commands.
func openDaemonBus(t *testing.T, ctx context.Context, cfgPath string) *bus.Bus {
	t.Helper()
	l, err := config.Load(cfgPath, catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	o := daemon.BusOptions(&l.Config)
	o.LocalListen = true
	b, err := bus.Open(ctx, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lastForget reads the newest zpool.forget fact of host from the facts stream.
func lastForget(t *testing.T, ctx context.Context, b *bus.Bus, host string) facts.PoolForgetData {
	t.Helper()
	s, err := b.JS.Stream(ctx, bus.StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(ctx, bus.Subject(host, facts.PoolForget.Name()))
	if err != nil {
		t.Fatalf("no forget fact for %s: %v", host, err)
	}
	var env bus.Envelope
	if err := json.Unmarshal(m.Data, &env); err != nil {
		t.Fatal(err)
	}
	var d facts.PoolForgetData
	if err := json.Unmarshal(env.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// `zwatch forget-pool` reaches a running daemon's embedded bus on its
// loopback listener (authenticated with the credentials in the state
// directory); with no daemon it writes into the store for the next start,
// also when a killed daemon left its address behind.
func TestForgetPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state := t.TempDir()
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\nnotify:\n  console: false\n", state))

	// Running: the daemon's bus takes the command.
	b := openDaemonBus(t, ctx, cfgPath)
	if _, err := os.Stat(bus.LocalURLPath(state)); err != nil {
		t.Fatalf("the daemon's bus wrote no local address: %v", err)
	}
	out, errOut, code := run(t, "-c", cfgPath, "forget-pool", "backup")
	if code != exitOK {
		t.Fatalf("forget-pool with the daemon running exits %d: %s", code, errOut)
	}
	if !strings.Contains(out, "forgets pool backup on nas1") {
		t.Errorf("output: %q", out)
	}
	if d := lastForget(t, ctx, b, "nas1"); d.Pool != "backup" || d.By == "" {
		t.Errorf("fact = %+v, want pool backup and who asked", d)
	}
	if _, _, code := run(t, "-c", cfgPath, "forget-pool", "--host", "nas2", "tank"); code != exitOK {
		t.Fatalf("forget-pool --host exits %d", code)
	}
	if d := lastForget(t, ctx, b, "nas2"); d.Pool != "tank" {
		t.Errorf("--host nas2: fact = %+v", d)
	}
	b.Close()
	if _, err := os.Stat(bus.LocalURLPath(state)); !os.IsNotExist(err) {
		t.Fatalf("the local address outlives the daemon's bus: %v", err)
	}

	// Not running: into the store, read at the next start.
	if _, errOut, code := run(t, "-c", cfgPath, "forget-pool", "old"); code != exitOK {
		t.Fatalf("forget-pool with no daemon exits %d: %s", code, errOut)
	}
	// Killed: the address of a listener that is gone.
	if err := os.WriteFile(bus.LocalURLPath(state), []byte("nats://127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "-c", cfgPath, "forget-pool", "older"); code != exitOK {
		t.Fatalf("forget-pool after a killed daemon exits %d: %s", code, errOut)
	}
	b = openDaemonBus(t, ctx, cfgPath)
	defer b.Close()
	if d := lastForget(t, ctx, b, "nas1"); d.Pool != "older" {
		t.Errorf("after restart: fact = %+v, want pool older", d)
	}
	s, _ := b.JS.Stream(ctx, bus.StreamFacts)
	n := 0
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{bus.Subject("nas1", facts.PoolForget.Name())}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := c.Next(jetstream.FetchMaxWait(300 * time.Millisecond)); err != nil {
			break
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d forget facts for nas1 in the store, want 3 (backup, old, older)", n)
	}
}

func TestForgetPoolRefusesNonPools(t *testing.T) {
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\n", t.TempDir()))
	for arg, want := range map[string]string{
		"tank/photos":  "dataset, snapshot or bookmark",
		"tank@daily":   "dataset, snapshot or bookmark",
		"1tank":        "begin with a letter",
		"tank\x00x":    "cannot",
		"":             "empty",
		"tank;rm -rf/": "dataset",
	} {
		_, errOut, code := run(t, "-c", cfgPath, "forget-pool", arg)
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("forget-pool %q: exit %d, %q; want %d and %q", arg, code, errOut, exitUsage, want)
		}
	}
}
