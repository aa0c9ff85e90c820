package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/catalog"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zwatch.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// `zwatch fleet add-host` against the embedded bus the daemon runs: the
// printed config is a valid agent config that connects and publishes its
// facts (acknowledged) without a restart of the server; the same host again
// needs --rotate; `fleet hosts` lists it; `status --all-hosts` reaches the
// listener as the server; `remove-host` shuts the agent out.
func TestFleetAddHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state, addr := t.TempDir(), freeAddr(t)
	cfgPath := writeConfig(t, fmt.Sprintf("host: srv1\nstate_dir: %s\nbus:\n  listen: %s\nnotify:\n  console: false\n", state, addr))
	l, err := config.Load(cfgPath, catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.Open(ctx, daemon.BusOptions(&l.Config), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	out, errOut, code := run(t, "fleet", "add-host", "nas1.example.net", "-c", cfgPath)
	if code != exitOK {
		t.Fatalf("add-host: code %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "no restart") || strings.Count(out, "password:") != 1 {
		t.Errorf("add-host output:\n%s\nstderr:\n%s", out, errOut)
	}
	agent, err := config.Parse(strings.NewReader(out), catalog.Config())
	if err != nil {
		t.Fatalf("printed agent config is not valid: %v\n%s", err, out)
	}
	ac := agent.Config
	if ac.Role != config.RoleAgent || ac.Host != "nas1.example.net" || ac.Bus.User != "nas1_example_net" || ac.Bus.URL != "nats://"+addr {
		t.Fatalf("agent config %+v", ac.Bus)
	}
	// What `zwatch run` does with it as an agent (daemon.Run).
	o := daemon.BusOptions(&ac)
	o.NoStreams, o.InboxPrefix = true, bus.AgentInbox(ac.Host)
	var a *bus.Bus
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		octx, c := context.WithTimeout(ctx, 2*time.Second)
		a, err = bus.Open(octx, o, nil)
		c()
		if err == nil {
			if err = a.NC.FlushTimeout(time.Second); err == nil {
				break
			}
			a.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent with the printed config: %v", err)
		}
	}
	defer a.Close()
	msg, _ := bus.Wrap(facts.Heartbeat.Name(), ac.Host, "zwatch", time.Now(), facts.HeartbeatData{Version: "test", Started: time.Now()})
	if err := a.Publish(ctx, bus.Subject(ac.Host, facts.Heartbeat.Name()), msg); err != nil {
		t.Fatalf("agent publish: %v", err)
	}

	if _, errOut, code := run(t, "fleet", "add-host", "nas1.example.net", "-c", cfgPath); code != exitFailure || !strings.Contains(errOut, "--rotate") {
		t.Errorf("second add-host: code %d %s", code, errOut)
	}
	out2, _, code := run(t, "fleet", "add-host", "nas1.example.net", "--rotate", "-c", cfgPath)
	if code != exitOK || out2 == out {
		t.Errorf("rotate: code %d", code)
	}
	hosts, _, code := run(t, "fleet", "hosts", "-c", cfgPath)
	if code != exitOK || !strings.Contains(hosts, "nas1.example.net") || !strings.Contains(hosts, "nas1_example_net") {
		t.Errorf("hosts: code %d\n%s", code, hosts)
	}
	stat, errOut, code := run(t, "status", "--all-hosts", "-c", cfgPath)
	if code == exitNoData || !strings.Contains(stat, "nas1.example.net") {
		t.Errorf("status --all-hosts through the listener: code %d\n%s%s", code, stat, errOut)
	}
	// One machine: one engine, no leases, nothing unowned.
	engine, errOut, code := run(t, "fleet", "status", "-c", cfgPath)
	if code != exitOK || !strings.Contains(engine, "one engine on this machine's embedded bus") || !strings.Contains(engine, "PARTITION") {
		t.Errorf("fleet status: code %d\n%s%s", code, engine, errOut)
	}
	engineJSON, _, code := run(t, "fleet", "status", "--json", "-c", cfgPath)
	if code != exitOK || !strings.Contains(engineJSON, `"partitions": 1`) || !strings.Contains(engineJSON, `"leases": false`) || !strings.Contains(engineJSON, `"unowned": 0`) {
		t.Errorf("fleet status --json: code %d\n%s", code, engineJSON)
	}
	if _, errOut, code := run(t, "fleet", "remove-host", "nas1.example.net", "-c", cfgPath); code != exitOK {
		t.Errorf("remove-host: code %d %s", code, errOut)
	}
	if _, _, code := run(t, "fleet", "remove-host", "nas1.example.net", "-c", cfgPath); code != exitFailure {
		t.Errorf("remove-host of an unknown host: code %d", code)
	}
}

func TestFleetAddHostNeedsListener(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf("state_dir: %s\n", t.TempDir()))
	_, errOut, code := run(t, "fleet", "add-host", "nas1", "-c", cfg)
	if code != exitUsage || !strings.Contains(errOut, "bus.listen is empty") {
		t.Errorf("code %d: %s", code, errOut)
	}
	cfg = writeConfig(t, fmt.Sprintf("state_dir: %s\nbus:\n  listen: 127.0.0.1:0\n", t.TempDir()))
	if _, errOut, code := run(t, "fleet", "add-host", "nas1", "-c", cfg); code != exitUsage || !strings.Contains(errOut, "fixed port") {
		t.Errorf("random port: code %d: %s", code, errOut)
	}
}

// check-config refuses a listener other machines can reach without TLS,
// naming the keys that fix it, and takes it with a certificate and key.
func TestCheckConfigListenNeedsTLS(t *testing.T) {
	state := t.TempDir()
	bad := writeConfig(t, fmt.Sprintf("state_dir: %s\nbus:\n  listen: 0.0.0.0:4222\n", state))
	_, errOut, code := run(t, "check-config", bad)
	if code != exitUsage || !strings.Contains(errOut, `bus.listen = "0.0.0.0:4222"`) || !strings.Contains(errOut, "bus.listen_tls.cert and bus.listen_tls.key") {
		t.Errorf("code %d: %s", code, errOut)
	}
	cert, key := writeCert(t)
	good := writeConfig(t, fmt.Sprintf("state_dir: %s\nbus:\n  listen: 0.0.0.0:4222\n  listen_tls:\n    cert: %s\n    key: %s\n", state, cert, key))
	if out, errOut, code := run(t, "check-config", good); code != exitOK {
		t.Errorf("with TLS: code %d\n%s%s", code, out, errOut)
	}
	swapped := writeConfig(t, fmt.Sprintf("state_dir: %s\nbus:\n  listen: 0.0.0.0:4222\n  listen_tls:\n    cert: %s\n    key: %s\n", state, key, cert))
	if _, errOut, code := run(t, "check-config", swapped); code != exitUsage || !strings.Contains(errOut, "do not load") {
		t.Errorf("swapped cert and key: code %d: %s", code, errOut)
	}
	loop := writeConfig(t, fmt.Sprintf("state_dir: %s\nbus:\n  listen: 127.0.0.1:4222\n", state))
	if _, errOut, code := run(t, "check-config", loop); code != exitOK {
		t.Errorf("loopback without TLS: code %d: %s", code, errOut)
	}
}

// writeCert writes a self-signed certificate and its key.
func writeCert(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zwatch test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(k)
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key
}
