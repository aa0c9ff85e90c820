// Package clustertest starts the example three-node NATS cluster of
// configs/nats-cluster in-process for tests: the shipped configs are loaded
// with server.ProcessConfigFile, with certificate and store paths moved into
// a temporary directory and the ports moved to free loopback ports.
package clustertest

import (
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

	"github.com/nats-io/nats-server/v2/server"
)

// Passwords of the placeholder users in configs/nats-cluster/accounts.conf.
const (
	ServerUser     = "zwatch-server"
	ServerPassword = "server-secret-change-me"
)

// AgentPassword is the placeholder password of agent user host (nas1..nas3).
func AgentPassword(host string) string { return host + "-secret-change-me" }

// Cluster is three running nodes.
type Cluster struct {
	Dir     string
	CA      string
	Servers [3]*server.Server
	confs   [3]string
	ports   [3]int
	cports  [3]int
}

// Start loads confDir/node-{1,2,3}.conf and starts the three nodes.
func Start(t testing.TB, confDir string) *Cluster {
	t.Helper()
	c := prepare(t, confDir)
	for i := range 3 {
		c.startNode(t, i)
	}
	for i := range 3 {
		if !c.Servers[i].ReadyForConnections(20 * time.Second) {
			t.Fatalf("node %d not ready", i+1)
		}
	}
	t.Cleanup(func() {
		for i := range 3 {
			c.Stop(i)
		}
	})
	return c
}

// prepare writes the certificates and the nodes' configs into a temporary
// directory and picks their ports.
func prepare(t testing.TB, confDir string) *Cluster {
	t.Helper()
	c := &Cluster{Dir: t.TempDir()}
	certs := filepath.Join(c.Dir, "certs")
	if err := writeCerts(certs); err != nil {
		t.Fatal(err)
	}
	c.CA = filepath.Join(certs, "ca.pem")
	acc, err := os.ReadFile(filepath.Join(confDir, "accounts.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "accounts.conf"), acc, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		raw, err := os.ReadFile(filepath.Join(confDir, fmt.Sprintf("node-%d.conf", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(raw), "/etc/nats/certs/", certs+"/")
		s = strings.ReplaceAll(s, "/var/lib/nats/jetstream", filepath.Join(c.Dir, fmt.Sprintf("node-%d", i+1), "jetstream"))
		c.confs[i] = filepath.Join(c.Dir, fmt.Sprintf("node-%d.conf", i+1))
		if err := os.WriteFile(c.confs[i], []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		c.ports[i], c.cports[i] = freePort(t), freePort(t)
	}
	return c
}

// Options loads node i's config as the test runs it.
func (c *Cluster) Options(i int) (*server.Options, error) {
	o, err := server.ProcessConfigFile(c.confs[i])
	if err != nil {
		return nil, err
	}
	o.Host, o.Port = "127.0.0.1", c.ports[i]
	o.HTTPHost, o.HTTPPort = "", 0
	o.Cluster.Host, o.Cluster.Port = "127.0.0.1", c.cports[i]
	var routes []string
	for j := range 3 {
		if j != i {
			routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", c.cports[j]))
		}
	}
	o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
	o.NoSigs, o.NoLog = true, os.Getenv("NATS_DEBUG") == ""
	return o, nil
}

func (c *Cluster) startNode(t testing.TB, i int) {
	t.Helper()
	o, err := c.Options(i)
	if err != nil {
		t.Fatalf("node %d config: %v", i+1, err)
	}
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatalf("node %d: %v", i+1, err)
	}
	if os.Getenv("NATS_DEBUG") != "" {
		s.ConfigureLogger()
	}
	go s.Start()
	c.Servers[i] = s
}

// Stop shuts node i down (a node failure).
func (c *Cluster) Stop(i int) {
	if s := c.Servers[i]; s != nil {
		s.Shutdown()
		s.WaitForShutdown()
		c.Servers[i] = nil
	}
}

// Restart starts a stopped node i again on its ports and store.
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	c.startNode(t, i)
	if !c.Servers[i].ReadyForConnections(20 * time.Second) {
		t.Fatalf("node %d not ready after restart", i+1)
	}
}

// URL lists the client URLs of all three nodes.
func (c *Cluster) URL() string {
	var u []string
	for i := range 3 {
		u = append(u, fmt.Sprintf("tls://127.0.0.1:%d", c.ports[i]))
	}
	return strings.Join(u, ",")
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeCerts makes a CA and nats-{1,2,3}.pem / -key.pem valid for
// 127.0.0.1, localhost and nats-N.example.net, for server and client use.
func writeCerts(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zwatch test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	if err := writePEM(filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER); err != nil {
		return err
	}
	for i := 1; i <= 3; i++ {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: fmt.Sprintf("nats-%d", i)},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			DNSNames:    []string{"localhost", fmt.Sprintf("nats-%d.example.net", i)},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, fmt.Sprintf("nats-%d.pem", i)), "CERTIFICATE", der); err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, fmt.Sprintf("nats-%d-key.pem", i)), "EC PRIVATE KEY", kder); err != nil {
			return err
		}
	}
	return nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
