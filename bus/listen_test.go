package bus

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeTestCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zwatch test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "bus.pem"), filepath.Join(dir, "bus-key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key
}

// An agent's credentials made by AddAgent let it publish through the
// listener; the same host again is refused unless rotated, and a rotated
// password takes over without a restart: the old one no longer connects
// and the connection that used it is closed.
func TestListenerAgentAddAndRotate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	b, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: dir, Listen: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pw, err := AddAgent(dir, "agent1", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AddAgent(dir, "agent1", false, time.Now()); !errors.Is(err, ErrAgentExists) || !strings.Contains(err.Error(), "--rotate") {
		t.Fatalf("second add-host: %v", err)
	}
	waitAgentAccepted(t, b.ClientURL(), "agent1", pw)
	agent, err := Open(ctx, Options{URL: b.ClientURL(), User: AgentUser("agent1"), Password: pw, NoStreams: true, InboxPrefix: AgentInbox("agent1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := Wrap("heartbeat", "agent1", "zwatch", time.Now(), map[string]string{})
	if err := agent.Publish(ctx, Subject("agent1", "heartbeat"), msg); err != nil {
		t.Fatal(err)
	}
	info, err := b.JS.Stream(ctx, StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.Msgs; n != 1 {
		t.Fatalf("facts stream has %d messages, want 1", n)
	}
	agent.Close()

	// The old connection must be closed for good, not reconnect.
	closed := make(chan struct{})
	old, err := nats.Connect(b.ClientURL(), nats.UserInfo("agent1", pw), nats.NoReconnect(), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	pw2, err := AddAgent(dir, "agent1", true, time.Now())
	if err != nil || pw2 == pw {
		t.Fatalf("rotate: %v", err)
	}
	waitAgentAccepted(t, b.ClientURL(), "agent1", pw2)
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Error("a connection with the replaced password stays connected")
	}
	if nc, err := nats.Connect(b.ClientURL(), nats.UserInfo("agent1", pw), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Error("the replaced password still connects")
	}
	a, err := LoadAuth(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ag, ok := a.Agent("agent1"); !ok || ag.Replaced.IsZero() || strings.Contains(string(mustRead(t, AuthPath(dir))), pw2) {
		t.Errorf("agent entry %+v; the file must hold the hash, never the password", ag)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A listener other machines can reach is refused without TLS; with TLS an
// agent verifies the server by its CA, and a local zwatch command reaches
// its daemon through LocalClient (pinned certificate, server identity).
func TestListenerTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	start := time.Now()
	_, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: dir, Listen: "0.0.0.0:0"}, nil)
	if err == nil || !strings.Contains(err.Error(), "bus.listen_tls.cert") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("non-loopback listener without TLS: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("refusal took %s", time.Since(start))
	}
	cert, key := writeTestCert(t, t.TempDir())
	o := Options{FactSubjects: testFactSubjects, StateDir: dir, Listen: "0.0.0.0:0", ListenTLSCert: cert, ListenTLSKey: key}
	b, err := Open(ctx, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, port, _ := net.SplitHostPort(b.server.srv.Addr().String())
	pw, err := AddAgent(dir, "nas1", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	url := "tls://127.0.0.1:" + port
	if nc, err := nats.Connect(url, nats.UserInfo("nas1", pw), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("TLS accepted without a CA that signed the certificate")
	}
	var agent *Bus
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		octx, c := context.WithTimeout(ctx, 3*time.Second)
		agent, err = Open(octx, Options{URL: url, User: "nas1", Password: pw, TLSCA: cert, NoStreams: true, InboxPrefix: AgentInbox("nas1")}, nil)
		c()
		if err == nil {
			if err = agent.NC.FlushTimeout(2 * time.Second); err == nil {
				break
			}
			agent.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent over TLS: %v", err)
		}
	}
	defer agent.Close()
	msg, _ := Wrap("heartbeat", "nas1", "zwatch", time.Now(), map[string]string{})
	if err := agent.Publish(ctx, Subject("nas1", "heartbeat"), msg); err != nil {
		t.Fatal(err)
	}

	o.Listen = "0.0.0.0:" + port
	lo, err := LocalClient(o)
	if err != nil {
		t.Fatal(err)
	}
	// The daemon's streams are sized to its filesystem: a command that
	// asked for the full sizes was refused by a shrunk store (make e2e).
	if lo.URL != url || lo.User != ServerUser || !lo.NoStreams {
		t.Fatalf("local client options %+v", lo)
	}
	cli, err := Open(ctx, lo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	st, err := cli.JS.Stream(ctx, StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("the local client reads %d facts, want 1", n)
	}
	// Another certificate than the daemon's is refused by the pin.
	other, _ := writeTestCert(t, t.TempDir())
	lo.TLSPinCert = other
	octx, c := context.WithTimeout(ctx, 3*time.Second)
	defer c()
	if b2, err := Open(octx, lo, nil); err == nil {
		err = b2.NC.FlushTimeout(2 * time.Second)
		b2.Close()
		if err == nil {
			t.Error("pinned client accepted another certificate")
		}
	}
}

func TestLoadAuthRefusesOpenOrDamagedFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := EnsureAuth(dir); err != nil {
		t.Fatal(err)
	}
	path := AuthPath(dir)
	os.Chmod(path, 0o644)
	if _, err := LoadAuth(dir); err == nil || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Errorf("world-readable credentials: %v", err)
	}
	os.Chmod(path, 0o600)
	os.WriteFile(path, []byte(`{"version":1,`), 0o600)
	if _, err := LoadAuth(dir); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged credentials: %v", err)
	}
	if _, err := AddAgent(dir, "zwatch-server", false, time.Now()); err == nil {
		t.Error("an agent named like the server user was accepted")
	}
	if _, err := AddAgent(dir, " nas1", false, time.Now()); err == nil {
		t.Error("a host name with a space was accepted")
	}
}

// The loopback listener for this machine's commands (LocalListen) binds
// loopback only, refuses a client without the server's credentials, and
// LocalClient reaches it with them; its address file is private and goes
// with the server.
func TestLocalListener(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	if _, err := LocalClient(Options{StateDir: dir}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("LocalClient with no daemon: %v, want ErrNotRunning", err)
	}
	b, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: dir, LocalListen: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	url := b.ClientURL()
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("listens at %q, want loopback", url)
	}
	st, err := os.Stat(LocalURLPath(dir))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("address file: %v, mode %v", err, st.Mode())
	}
	if nc, err := nats.Connect(url, nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("connected without credentials")
	}
	o, err := LocalClient(Options{StateDir: dir})
	if err != nil || o.URL != url || !o.NoStreams {
		t.Fatalf("LocalClient = %q (NoStreams %v), %v; want %s, leaving the streams to the daemon", o.URL, o.NoStreams, err, url)
	}
	nc, err := nats.Connect(o.URL, nats.UserInfo(o.User, o.Password), nats.NoReconnect())
	if err != nil {
		t.Fatalf("the server identity cannot connect: %v", err)
	}
	nc.Close()
}
