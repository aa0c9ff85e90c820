package web_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/views/web"
)

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zwatch test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// syncBuffer is a log sink the server writes from its goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServeTLSLoginAndShutdown runs Serve as the daemon does: TLS 1.2 at
// least, the login, the one log line without secrets, Ready with the
// address, and a clean stop when the context ends.
func TestServeTLSLoginAndShutdown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	certFile, keyFile, roots := selfSigned(t)
	hc := f.cfg.HTTP
	hc.Listen = "127.0.0.1:0"
	hc.TLS.Cert, hc.TLS.Key = certFile, keyFile
	var logs syncBuffer
	ready := make(chan net.Addr, 1)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		served <- web.Serve(sctx, web.Options{Config: hc, View: f.view, Version: "test",
			Log: slog.New(slog.NewTextHandler(&logs, nil)), Ready: func(a net.Addr) { ready <- a }})
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-served:
		t.Fatalf("Serve: %v", err)
	}
	base := "https://" + addr.String()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	defer tr.CloseIdleConnections()
	hcl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func(user, pass string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/hosts", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := hcl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get("", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("no login over TLS: %d", r.StatusCode)
	}
	if r := get(loginName, loginPassword); r.StatusCode != http.StatusOK || r.Header.Get("Strict-Transport-Security") == "" {
		t.Errorf("login over TLS: %d, HSTS %q", r.StatusCode, r.Header.Get("Strict-Transport-Security"))
	}
	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MaxVersion: tls.VersionTLS11}}}
	if _, err := old.Get(base + "/"); err == nil {
		t.Error("a TLS 1.1 client was served")
	}
	if plain, err := http.Get("http://" + addr.String() + "/"); err != nil || plain.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP to the TLS port: %v %v, want 400", plain, err)
	} else {
		plain.Body.Close()
	}

	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	out := logs.String()
	if strings.Count(out, "status page listening") != 1 || !strings.Contains(out, "url="+base+"/") {
		t.Errorf("log: %s", out)
	}
	for _, s := range f.secrets {
		if strings.Contains(out, s) {
			t.Errorf("the log holds the secret %q: %s", s, out)
		}
	}
}

func TestServeRefusesWhatCannotWork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for name, tc := range map[string]struct {
		listen, cert, key string
		want              string
	}{
		"port in use": {busy.Addr().String(), "", "", "listen on http.listen " + busy.Addr().String()},
		"no cert":     {"127.0.0.1:0", "/nonexistent/cert.pem", "/nonexistent/key.pem", "http.tls cert /nonexistent/cert.pem"},
		"off":         {"", "", "", "http.listen is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			hc := f.cfg.HTTP
			hc.Listen, hc.TLS.Cert, hc.TLS.Key = tc.listen, tc.cert, tc.key
			err := web.Serve(ctx, web.Options{Config: hc, View: f.view})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if err := web.Serve(ctx, web.Options{Config: f.cfg.HTTP}); err == nil || !strings.Contains(err.Error(), "no view") {
		t.Errorf("no view: %v", err)
	}
}
