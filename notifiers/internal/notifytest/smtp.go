package notifytest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Cert is a self-signed certificate for 127.0.0.1 and localhost, and the
// PEM file a client trusts it with.
type Cert struct {
	TLS    *tls.Config
	CAFile string
}

// NewCert makes a certificate valid for an hour.
func NewCert(t testing.TB) Cert {
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
	return Cert{TLS: &tls.Config{Certificates: []tls.Certificate{pair}}, CAFile: ca}
}

// Received is one message the SMTP sink accepted.
type Received struct {
	From     string
	To       []string
	Data     []byte
	AuthUser string
	AuthPass string
	TLS      bool
	// At is when the sink accepted it.
	At time.Time
}

// SMTPSink is a real SMTP server (emersion/go-smtp) on loopback.
type SMTPSink struct {
	Addr string
	Port int
	// Got receives every accepted message.
	Got chan Received

	mu     sync.Mutex
	msgs   []Received
	reject func() error
	conns  int
}

// SinkMode is how the SMTP sink speaks TLS.
type SinkMode int

// SMTP sink modes.
const (
	SinkPlain SinkMode = iota
	SinkStartTLS
	SinkImplicit
)

// StartSMTP serves on addr ("" for a free port) until the test ends;
// user/pass "" disables AUTH.
func StartSMTP(t testing.TB, mode SinkMode, cert *Cert, user, pass, addr string) *SMTPSink {
	t.Helper()
	s := &SMTPSink{Got: make(chan Received, 1000)}
	be := smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &sinkSession{sink: s, user: user, pass: pass, cur: Received{TLS: isTLS}}, nil
	})
	srv := smtp.NewServer(be)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.AllowInsecureAuth = false
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	tl, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var l net.Listener = countingListener{Listener: tl, sink: s}
	switch mode {
	case SinkStartTLS:
		srv.TLSConfig = cert.TLS
	case SinkImplicit:
		srv.TLSConfig = cert.TLS
		l = tls.NewListener(l, cert.TLS)
	}
	s.Addr = l.Addr().String()
	s.Port = l.Addr().(*net.TCPAddr).Port
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// All is every accepted message so far.
func (s *SMTPSink) All() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.msgs...)
}

// Connections counts the connections the sink accepted.
func (s *SMTPSink) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// countingListener counts accepted connections into its sink.
type countingListener struct {
	net.Listener
	sink *SMTPSink
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.sink.mu.Lock()
		l.sink.conns++
		l.sink.mu.Unlock()
	}
	return c, err
}

// Reject answers DATA with fn's error while it returns one (a 4xx outage).
func (s *SMTPSink) Reject(fn func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reject = fn
}

// ErrUnavailable is a 451: the server is up but refuses for now.
var ErrUnavailable = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}

type sinkSession struct {
	sink       *SMTPSink
	user, pass string
	cur        Received
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
	m.Data, m.At = data, time.Now()
	ss.sink.mu.Lock()
	ss.sink.msgs = append(ss.sink.msgs, m)
	ss.sink.mu.Unlock()
	ss.sink.Got <- m
	return nil
}

func (ss *sinkSession) Reset() {
	ss.cur = Received{TLS: ss.cur.TLS, AuthUser: ss.cur.AuthUser, AuthPass: ss.cur.AuthPass}
}

func (ss *sinkSession) Logout() error { return nil }

// ParsedMail is a received message taken apart with net/mail and
// mime/multipart.
type ParsedMail struct {
	Subject, Text, HTML string
	Header              mail.Header
}

// ParseMail takes raw apart; it must be multipart/alternative.
func ParseMail(t testing.TB, raw []byte) ParsedMail {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a mail message: %v\n%s", err, raw)
	}
	var dec mime.WordDecoder
	subj, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	p := ParsedMail{Subject: subj, Header: msg.Header}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(part) // quoted-printable is decoded by the reader
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
		ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		switch ct {
		case "text/plain":
			p.Text = string(b)
		case "text/html":
			p.HTML = string(b)
		default:
			t.Errorf("unexpected part %s", ct)
		}
	}
	return p
}
