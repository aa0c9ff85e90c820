package daemon

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// syncBuf is a log sink the test prints when it fails.
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

// sdListener stands in for systemd's notify socket and keeps what zwatch
// said, in order, with when.
type sdListener struct {
	mu   sync.Mutex
	msgs []sdMsg
}

type sdMsg struct {
	at   time.Time
	text string
}

func listenNotify(t *testing.T) *sdListener {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", sock)
	l := &sdListener{}
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			l.mu.Lock()
			l.msgs = append(l.msgs, sdMsg{time.Now(), string(buf[:n])})
			l.mu.Unlock()
		}
	}()
	return l
}

// since returns the messages said after t.
func (l *sdListener) since(t time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, m := range l.msgs {
		if m.at.After(t) {
			out = append(out, m.text)
		}
	}
	return out
}

// startDaemon runs the daemon with cfgText until stop is called or the
// test ends; the log is printed if the test fails.
func startDaemon(t *testing.T, cfgText string, opts Options) (logs *syncBuf, stop func()) {
	t.Helper()
	l, err := config.Parse(strings.NewReader(cfgText), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	logs = &syncBuf{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, &l.Config, opts, log) }()
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
				t.Error("daemon did not shut down")
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	return logs, stop
}

// standInConfig is a daemon config that polls the zpool stand-in every
// second and delivers to the phone's webhook.
func standInConfig(stateDir, zpool, zfsCmd, phoneURL string) string {
	return fmt.Sprintf(`
host: nas1
state_dir: %s
zfs:
  zpool: %s
  zfs: %s
  list_interval: 1s
  status_interval: 1s
  follow_events: false
smart:
  enabled: false
rules:
  disabled: [MonitoringBlindSpot]
notify:
  console: false
  channels:
    - name: phone
      type: webhook
      url: %s
      min_severity: info
`, stateDir, zpool, zfsCmd, phoneURL)
}

// mountTmpfs mounts a tmpfs of size on a new directory, unmounted when the
// test ends; it needs root.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "zwatch-test", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	// Registered after TempDir's cleanup, so it runs first.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file until the filesystem is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	// The last partial page, byte by byte.
	for {
		if _, err := f.Write(buf[:512]); err != nil {
			return
		}
	}
}

func isDirect(p notifiers.WebhookPayload) bool { return strings.Contains(p.Text, delivery.DirectNote) }

func mentions(p notifiers.WebhookPayload, s string) bool {
	return strings.Contains(p.Summary+"\n"+p.Text, s)
}

// startListeningServer runs `zwatch run --role server` with its own listener
// (bus.listen on a free loopback port, no external cluster), every
// notification going to phoneURL, and waits for the credentials it makes at
// start, which agents and the local CLI need. It returns the parsed config,
// the state directory and the listener's URL.
func startListeningServer(t *testing.T, phoneURL string) (cfg *config.Config, state, url string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	state = t.TempDir()
	text := fmt.Sprintf(`
host: srv
role: server
state_dir: %s
bus:
  listen: %s
http:
  listen: ""
rules:
  group_wait: 0s
notify:
  console: false
  channels:
    - name: phone
      type: webhook
      url: %s
      min_severity: info
`, state, addr, phoneURL)
	parsed, err := config.Parse(strings.NewReader(text), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	startDaemon(t, text, Options{})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(bus.AuthPath(state)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no credentials file after start")
		}
	}
	return &parsed.Config, state, "nats://" + addr
}

// addAgent adds host's credentials to a running server's state directory,
// as `zwatch fleet add-host` does, and waits until the listener lets the
// agent in, without a restart. It returns the agent's password.
func addAgent(t *testing.T, state, url, host string) string {
	t.Helper()
	pw, err := bus.AddAgent(state, host, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		nc, err := nats.Connect(url, nats.UserInfo(host, pw), nats.Timeout(5*time.Second), nats.NoReconnect())
		if err == nil {
			nc.Close()
			return pw
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s not let in without a restart: %v", host, err)
		}
	}
}
