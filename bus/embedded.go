package bus

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// authReloadEvery is how often a listening server looks for agents added
// by `zwatch fleet add-host` (one stat of the credentials file).
const authReloadEvery = 2 * time.Second

// embedded is the running embedded server, and when it listens, the
// credentials it accepts and the watcher that reloads them.
type embedded struct {
	srv *server.Server
	// sizes bound the streams, fitted to the filesystem (fitStore).
	sizes StoreSizes
	auth  *Auth // nil without a listener: nothing to authenticate
	// localURL is the file naming the loopback listener (LocalListen).
	localURL string
	stop     chan struct{}
	done     sync.WaitGroup
}

// LoopbackHost reports whether a listen host is reachable from this
// machine only (127.0.0.0/8, ::1, localhost); "" and 0.0.0.0 are not.
func LoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// startEmbedded starts a NATS server with JetStream stored in
// StateDir/jetstream. With Listen it also takes network clients, each of
// which must authenticate (AuthPath), over TLS unless Listen is loopback.
func startEmbedded(o Options, log *slog.Logger, statfs statfsFunc) (*embedded, error) {
	if o.StateDir == "" {
		return nil, errors.New("state directory is empty: set --state-dir or state_dir")
	}
	if err := CheckWritable(o.StateDir); err != nil {
		return nil, err
	}
	storeDir := filepath.Join(o.StateDir, "jetstream")
	if err := os.MkdirAll(storeDir, 0o750); err != nil {
		return nil, fmt.Errorf("bus store %s: %w", storeDir, err)
	}
	sizes, shrunk, err := fitStore(storeDir, o, statfs)
	if err != nil {
		return nil, err
	}
	limit := sizes.Total()
	if shrunk {
		log.Warn("little space for the bus store: its limits are lowered to fit (free space there, or move state_dir, to restore them)",
			"store", storeDir, "limit_mib", limit>>20, "facts_mib", sizes.Facts>>20, "outbox_mib", sizes.Alerts>>20, "wanted_mib", StoreLimit(o)>>20)
	}
	opts := &server.Options{
		ServerName:         "zwatch-embedded",
		JetStream:          true,
		StoreDir:           storeDir,
		JetStreamMaxStore:  limit,
		NoSigs:             true,
		NoLog:              true,
		DontListen:         true,
		JetStreamMaxMemory: 64 << 20,
		// The embedded server serves one process; keep its buffers small.
		MaxPayload: 8 << 20,
	}
	e := &embedded{sizes: sizes}
	local := o.Listen == "" && o.LocalListen
	if local {
		// Any free port: the address goes to LocalURLPath, not into a config.
		o.Listen = "127.0.0.1:0"
	}
	if o.Listen != "" {
		if err := listenOptions(o, opts); err != nil {
			return nil, err
		}
		a, err := EnsureAuth(o.StateDir)
		if err != nil {
			return nil, err
		}
		e.auth = a
		opts.Users = a.serverUsers()
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(15 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded NATS server did not become ready within 15s (state dir %s)", o.StateDir)
	}
	e.srv = srv
	if local {
		e.localURL = LocalURLPath(o.StateDir)
		if err := writeLocalURL(e.localURL, srv.ClientURL()); err != nil {
			srv.Shutdown()
			return nil, err
		}
		log.Debug("bus listening for this machine's commands", "addr", srv.ClientURL(), "file", e.localURL)
	} else if o.Listen != "" {
		log.Info("bus listening for agents", "addr", srv.ClientURL(), "tls", opts.TLSConfig != nil, "agents", len(e.auth.Agents), "credentials", AuthPath(o.StateDir))
		e.stop = make(chan struct{})
		e.done.Go(func() { e.watchAuth(o.StateDir, opts, log) })
	}
	return e, nil
}

// listenOptions opens the client listener: TLS from ListenTLSCert/Key,
// required for an address other machines can reach.
func listenOptions(o Options, opts *server.Options) error {
	host, portStr, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fmt.Errorf("bus.listen %q: want host:port such as 127.0.0.1:4222: %w", o.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return fmt.Errorf("bus.listen %q: port must be 0-65535", o.Listen)
	}
	if o.ListenTLSCert == "" && !LoopbackHost(host) {
		return fmt.Errorf("bus.listen %q reaches other machines and needs TLS: set bus.listen_tls.cert and bus.listen_tls.key (this server's PEM certificate and key), or listen on 127.0.0.1", o.Listen)
	}
	if o.ListenTLSCert != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: o.ListenTLSCert, KeyFile: o.ListenTLSKey})
		if err != nil {
			return fmt.Errorf("bus.listen_tls: %w (want the PEM certificate and its unencrypted key)", err)
		}
		opts.TLSConfig, opts.TLS, opts.TLSTimeout = tc, true, 5
	}
	if port == 0 {
		// nats-server reads 0 as its default port 4222; -1 is "any free port".
		port = server.RANDOM_PORT
	}
	opts.DontListen, opts.Host, opts.Port = false, host, port
	// bcrypt checks take tens of milliseconds; leave room for TLS too.
	opts.AuthTimeout = 5
	return nil
}

// watchAuth lets agents added (or rotated) by `zwatch fleet add-host` in
// without a restart: when the credentials file changes, the server reloads
// its users, which also disconnects a connection whose password was replaced.
func (e *embedded) watchAuth(stateDir string, base *server.Options, log *slog.Logger) {
	path := AuthPath(stateDir)
	last := fileStamp(path)
	t := time.NewTicker(authReloadEvery)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		stamp := fileStamp(path)
		if stamp == last {
			continue
		}
		a, err := LoadAuth(stateDir)
		if err != nil {
			log.Error("bus credentials not reloaded; the agents known before still connect", "err", err)
			last = stamp
			continue
		}
		next := base.Clone()
		next.Users = a.serverUsers()
		if err := e.srv.ReloadOptions(next); err != nil {
			log.Error("bus credentials not reloaded: restart zwatch to let new agents in", "err", err)
		} else {
			log.Info("bus credentials reloaded", "agents", len(a.Agents))
		}
		last = stamp
	}
}

// fileStamp changes whenever the file is replaced (writeAuth renames, so
// the inode changes even within one mtime tick).
func fileStamp(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	var ino uint64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = uint64(sys.Ino)
	}
	return fmt.Sprint(st.ModTime().UnixNano(), st.Size(), ino)
}

// LocalURLPath is where a daemon with LocalListen writes the address of its
// loopback listener, for LocalClient.
func LocalURLPath(stateDir string) string {
	return filepath.Join(filepath.Dir(AuthPath(stateDir)), "local.url")
}

// writeLocalURL writes the loopback address atomically, readable by its
// owner only (the credentials beside it are what protects the listener;
// the address is kept as private).
func writeLocalURL(path, url string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(url+"\n"), 0o600); err != nil {
		return fmt.Errorf("bus local address %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("bus local address %s: %w", path, err)
	}
	return nil
}

func (e *embedded) shutdown() {
	if e.localURL != "" {
		// Gone with the listener: a command then knows the daemon is not running.
		_ = os.Remove(e.localURL)
	}
	if e.stop != nil {
		close(e.stop)
		e.done.Wait()
		e.stop = nil
	}
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// LocalClient turns the options of a daemon whose embedded server listens
// into the options to reach that daemon from this machine (zwatch status
// --all-hosts, zwatch alerts): its listener on loopback when it listens on
// every address, the server identity from the state directory, and with TLS
// the daemon's own certificate as the only one accepted.
//
// Without Listen it reaches the loopback listener of a daemon started with
// LocalListen; the error wraps ErrNotRunning when no daemon runs there.
func LocalClient(o Options) (Options, error) {
	if o.Listen == "" {
		return localListenerClient(o)
	}
	host, port, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return o, fmt.Errorf("bus.listen %q: want host:port: %w", o.Listen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	a, err := LoadAuth(o.StateDir)
	if err != nil {
		return o, fmt.Errorf("%w (run this as the user zwatch runs as, with its state_dir)", err)
	}
	scheme := "nats"
	if o.ListenTLSCert != "" {
		scheme, o.TLSPinCert = "tls", o.ListenTLSCert
	}
	o.URL, o.Listen = scheme+"://"+net.JoinHostPort(host, port), ""
	o.User, o.Password, o.CredsFile = a.Server.User, a.Server.Password, ""
	// The daemon owns its streams, sized to its filesystem: a command
	// asking for the full sizes would be refused by a shrunk store.
	o.NoStreams = true
	return o, nil
}

// ErrNotRunning says no daemon serves this state directory.
var ErrNotRunning = errors.New("zwatch is not running with this state directory")

func localListenerClient(o Options) (Options, error) {
	path := LocalURLPath(o.StateDir)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return o, fmt.Errorf("%w (no %s)", ErrNotRunning, path)
	}
	if err != nil {
		return o, fmt.Errorf("bus local address %s: %w (run this as the user zwatch runs as, with its state_dir)", path, err)
	}
	url := string(bytes.TrimSpace(data))
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		return o, fmt.Errorf("bus local address %s holds %q, not a loopback address: remove it and restart zwatch", path, url)
	}
	a, err := LoadAuth(o.StateDir)
	if err != nil {
		return o, fmt.Errorf("%w (run this as the user zwatch runs as, with its state_dir)", err)
	}
	// A daemon that was killed leaves its address behind; nothing answers
	// there, and nats.go would retry it for as long as it is allowed to.
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "nats://"), 2*time.Second)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return o, fmt.Errorf("%w (nothing listens at %s, named by %s)", ErrNotRunning, url, path)
	}
	if err != nil {
		return o, fmt.Errorf("bus local address %s: %w", url, err)
	}
	conn.Close()
	o.URL, o.User, o.Password, o.CredsFile = url, a.Server.User, a.Server.Password, ""
	o.NoStreams = true // the daemon's, as in LocalClient
	return o, nil
}

// pinnedTLS accepts exactly the certificate in certFile, whatever its
// names and issuer: a local command talking to its own daemon.
func pinnedTLS(certFile string) (*tls.Config, error) {
	data, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("bus.listen_tls.cert: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("bus.listen_tls.cert %s: no PEM certificate", certFile)
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return nil, fmt.Errorf("bus.listen_tls.cert %s: %w", certFile, err)
	}
	want := block.Bytes
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Verification is the pin below, not a chain to a CA.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], want) {
				return fmt.Errorf("the bus listener's certificate is not %s", certFile)
			}
			return nil
		},
	}, nil
}
