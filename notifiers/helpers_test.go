package notifiers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
)

// testCert is a self-signed certificate for 127.0.0.1 and localhost, and
// the PEM file a client trusts it with.
type testCert struct {
	tls    *tls.Config
	caFile string
}

func newTestCert(t testing.TB) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "zwatch test smtp"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kb, _ := x509.MarshalECPrivateKey(key)
	pair, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return testCert{tls: &tls.Config{Certificates: []tls.Certificate{pair}}, caFile: ca}
}

// received is one message the SMTP sink accepted.
type received struct {
	From     string
	To       []string
	Data     []byte
	AuthUser string
	AuthPass string
	TLS      bool
}

// smtpSink is a real SMTP server (emersion/go-smtp) on loopback.
type smtpSink struct {
	Addr string
	Port int

	mu   sync.Mutex
	msgs []received
	// reject, when set, answers DATA with its error (a 4xx outage).
	reject func() error
	got    chan received
	srv    *smtp.Server
}

type sinkMode int

const (
	sinkPlain sinkMode = iota
	sinkStartTLS
	sinkImplicit
)

// startSMTP serves on addr ("" for a free port); user/pass "" disables AUTH.
func startSMTP(t testing.TB, mode sinkMode, cert *testCert, user, pass, addr string) *smtpSink {
	t.Helper()
	s := &smtpSink{got: make(chan received, 1000)}
	be := smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &sinkSession{sink: s, user: user, pass: pass, cur: received{TLS: isTLS}}, nil
	})
	srv := smtp.NewServer(be)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.AllowInsecureAuth = false
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	switch mode {
	case sinkStartTLS:
		srv.TLSConfig = cert.tls
	case sinkImplicit:
		srv.TLSConfig = cert.tls
		l = tls.NewListener(l, cert.tls)
	}
	s.srv = srv
	s.Addr = l.Addr().String()
	s.Port = l.Addr().(*net.TCPAddr).Port
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

func (s *smtpSink) all() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

type sinkSession struct {
	sink       *smtpSink
	user, pass string
	cur        received
}

func (ss *sinkSession) AuthMechanisms() []string {
	if ss.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *sinkSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		ss.cur.AuthUser, ss.cur.AuthPass = username, password
		if username != ss.user || password != ss.pass {
			return smtp.ErrAuthFailed
		}
		return nil
	}), nil
}

func (ss *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if ss.user != "" && ss.cur.AuthUser == "" {
		return smtp.ErrAuthRequired
	}
	ss.cur.From = from
	return nil
}

func (ss *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.cur.To = append(ss.cur.To, to)
	return nil
}

func (ss *sinkSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.sink.mu.Lock()
	reject := ss.sink.reject
	ss.sink.mu.Unlock()
	if reject != nil {
		if err := reject(); err != nil {
			return err
		}
	}
	m := ss.cur
	m.Data = data
	ss.sink.mu.Lock()
	ss.sink.msgs = append(ss.sink.msgs, m)
	ss.sink.mu.Unlock()
	ss.sink.got <- m
	return nil
}

func (ss *sinkSession) Reset() {
	ss.cur = received{TLS: ss.cur.TLS, AuthUser: ss.cur.AuthUser, AuthPass: ss.cur.AuthPass}
}

func (ss *sinkSession) Logout() error { return nil }

// hit is one HTTP request a fake service received.
type hit struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

func (h hit) json(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(h.Body, &v); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, h.Body)
	}
	return v
}

// httpSink is a real HTTP server standing in for a service's API.
type httpSink struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
	got  chan hit
	// answer writes the response; default 200 with reply.
	answer func(w http.ResponseWriter, h hit)
	reply  string
}

func startHTTP(t testing.TB, reply string) *httpSink {
	t.Helper()
	s := &httpSink{got: make(chan hit, 1000), reply: reply}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := hit{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: b}
		s.mu.Lock()
		answer := s.answer
		s.mu.Unlock()
		if answer != nil {
			answer(w, h)
			return
		}
		s.record(h)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, s.reply)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *httpSink) record(h hit) {
	s.mu.Lock()
	s.hits = append(s.hits, h)
	s.mu.Unlock()
	s.got <- h
}

func (s *httpSink) all() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.hits...)
}

func openBus(t testing.TB, dir string) *bus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: dir, Name: "notifiers-test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func publish(t testing.TB, b *bus.Bus, n alert.Notification) {
	t.Helper()
	data, err := bus.Wrap("notification", n.Host, "rules", time.Now(), n)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Publish(ctx, bus.Subject(n.Host, bus.KindAlert), data); err != nil {
		t.Fatal(err)
	}
}

// runNotifiers starts Run in the background; stop cancels it and waits.
func runNotifiers(t testing.TB, b *bus.Bus, cfg config.NotifyConfig, opts Options) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, b, cfg, opts, testLog(t)) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Run did not stop within 30s")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func testLog(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// firingNotification is a non-test disk failure with a unique id.
func firingNotification(host, id string) alert.Notification {
	n := SampleNotification(host)
	n.ID, n.Test = id, false
	return n
}

var errUnavailable = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}

// freePort is a loopback port nothing listens on (for now).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

type urlishErr struct{ err error }

func (e *urlishErr) Error() string { return "dial tcp 127.0.0.1:25: " + e.err.Error() }
func (e *urlishErr) Unwrap() error { return e.err }

func syscallRefused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func dnsErr(name string) error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}}
}
