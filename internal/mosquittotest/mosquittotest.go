// Package mosquittotest starts a real Eclipse Mosquitto broker for tests of
// the MQTT channel, and watches what it holds with a real MQTT client.
package mosquittotest

import (
	"bytes"
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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Debian's mosquitto package (scripts/install-deps.sh --test).
const (
	Path       = "/usr/sbin/mosquitto"
	PasswdPath = "/usr/bin/mosquitto_passwd"
)

// Options shape the broker.
type Options struct {
	// Users, when set, are the only logins it accepts (a password file
	// made by mosquitto_passwd, anonymous clients refused).
	Users map[string]string
	// TLS adds a second listener with a certificate signed by a CA made
	// for the test (Broker.CAFile).
	TLS bool
	// Port, when set, is the plain listener's port (to restart a broker
	// where it was); default a free one.
	Port int
}

// Broker is one running mosquitto.
type Broker struct {
	Port    int
	TLSPort int
	// CAFile is the PEM of the CA that signed the TLS listener's certificate.
	CAFile string
	conf   string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	log    *syncBuf
	exited chan struct{}
	once   sync.Once
}

// Start starts mosquitto on free loopback ports and waits until it takes
// connections; it is killed when the test ends. Without mosquitto the test
// is skipped, or fails under ZW_REQUIRE_TOOLS=1.
func Start(t *testing.T, o Options) *Broker {
	t.Helper()
	for _, p := range []string{Path, PasswdPath} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("ZW_REQUIRE_TOOLS") == "1" {
				t.Fatalf("ZW_REQUIRE_TOOLS=1 but %s is missing: install mosquitto (scripts/install-deps.sh --test)", p)
			}
			t.Skipf("%s not installed: the MQTT broker tests are skipped (install mosquitto to run them)", p)
		}
	}
	dir := t.TempDir()
	b := &Broker{Port: o.Port, log: &syncBuf{}}
	if b.Port == 0 {
		b.Port = FreePort(t)
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "per_listener_settings false\npersistence false\nlog_dest stderr\nlog_type all\n")
	if os.Geteuid() == 0 {
		// As root, mosquitto drops to user mosquitto, which cannot read the
		// test's private temp dir.
		conf.WriteString("user root\n")
	}
	if len(o.Users) > 0 {
		pw := filepath.Join(dir, "passwd")
		if err := os.WriteFile(pw, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for u, p := range o.Users {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			out, err := exec.CommandContext(ctx, PasswdPath, "-b", pw, u, p).CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
			}
		}
		fmt.Fprintf(&conf, "allow_anonymous false\npassword_file %s\n", pw)
	} else {
		conf.WriteString("allow_anonymous true\n")
	}
	fmt.Fprintf(&conf, "listener %d 127.0.0.1\n", b.Port)
	if o.TLS {
		b.TLSPort = FreePort(t)
		ca, cert, key := writeCerts(t, dir)
		b.CAFile = ca
		fmt.Fprintf(&conf, "listener %d 127.0.0.1\ncertfile %s\nkeyfile %s\n", b.TLSPort, cert, key)
	}
	b.conf = filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(b.conf, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	b.start(t)
	t.Cleanup(b.Stop)
	return b
}

func (b *Broker) start(t *testing.T) {
	t.Helper()
	// Bounded like every command zwatch runs: no test outlives this.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.cmd = exec.CommandContext(ctx, Path, "-c", b.conf)
	b.cmd.Stdout, b.cmd.Stderr = b.log, b.log
	b.cancel, b.exited, b.once = cancel, make(chan struct{}), sync.Once{}
	if err := b.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", Path, err)
	}
	go func() {
		_ = b.cmd.Wait()
		close(b.exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for _, port := range []int{b.Port, b.TLSPort} {
		for port != 0 {
			c, err := net.DialTimeout("tcp", b.Addr(port), 200*time.Millisecond)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-b.exited:
				t.Fatalf("mosquitto exited at start:\n%s", b.log)
			default:
			}
			if time.Now().After(deadline) {
				b.Stop()
				t.Fatalf("mosquitto did not listen on %d within 10 s:\n%s", port, b.log)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Stop kills the broker (its clients see the connection drop) and waits
// for it to exit.
func (b *Broker) Stop() {
	b.once.Do(func() {
		_ = b.cmd.Process.Kill()
		<-b.exited
		b.cancel()
	})
}

// Restart starts the broker again on the same ports, with nothing retained.
func (b *Broker) Restart(t *testing.T) {
	t.Helper()
	b.Stop()
	b.start(t)
}

// Addr is 127.0.0.1:port.
func (b *Broker) Addr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// URL is the plain listener as the mqtt channel's broker key writes it.
func (b *Broker) URL() string { return "mqtt://" + b.Addr(b.Port) }

// TLSURL is the TLS listener (its certificate names 127.0.0.1).
func (b *Broker) TLSURL() string { return "mqtts://" + b.Addr(b.TLSPort) }

// Log is what mosquitto logged so far.
func (b *Broker) Log() string { return b.log.String() }

// FreePort is a loopback TCP port nothing listens on right now.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeCerts makes a CA and a certificate for localhost and 127.0.0.1.
func writeCerts(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zwatch test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	caFile, certFile, keyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for f, block := range map[string]*pem.Block{
		caFile: {Type: "CERTIFICATE", Bytes: caDER}, certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(f, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return caFile, certFile, keyFile
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
