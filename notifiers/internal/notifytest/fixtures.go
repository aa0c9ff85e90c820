package notifytest

import (
	"context"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/email"
)

// WantSummary is the first line of every rendering of Firing.
const WantSummary = "[CRITICAL] vault DEGRADED — disk WD-WX32D7088AF1 FAULTED, raidz2-0 can lose 1 more disk"

// GuideText is what Guide returns for a disk alert.
const GuideText = "1. Run: zpool offline vault 9384718273645510293\n2. Pull the disk with serial WD-WX32D7088AF1 from bay 3 <left cage>"

// Guide stands in for the replacement guide.
func Guide(a alert.Alert) string {
	if a.Replacement == nil {
		return ""
	}
	return GuideText
}

// Firing is a non-test disk failure with a unique id.
func Firing(host, id string) alert.Notification {
	n := notifiers.SampleNotification(host)
	n.ID, n.Test = id, false
	return n
}

// NotifyConfig is the default notify config with chs and no console.
func NotifyConfig(chs ...config.ChannelConfig) config.NotifyConfig {
	c := config.DefaultNotify()
	c.Console = false
	c.SendTimeout = config.Duration(5 * time.Second)
	c.Channels = chs
	return c
}

// BuildOne builds the channel cc describes.
func BuildOne(t testing.TB, cc config.ChannelConfig) notifiers.Channel {
	t.Helper()
	chs, err := notifiers.Build(NotifyConfig(cc))
	if err != nil {
		t.Fatal(err)
	}
	return chs[0]
}

// Send builds cc and sends it n rendered with Guide.
func Send(t testing.TB, cc config.ChannelConfig, n alert.Notification) error {
	t.Helper()
	ch := BuildOne(t, cc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ch.Send(ctx, notifiers.RenderGuided(n, Guide))
}

// EmailChannel is an email channel to the SMTP server on 127.0.0.1:port.
func EmailChannel(name string, port int, mode, user, pass, caFile string, to ...string) config.ChannelConfig {
	if len(to) == 0 {
		to = []string{"ops@example.net", "Jane Admin <jane@example.org>"}
	}
	return config.ChannelConfig{
		Name: name, Type: email.Service.Name(),
		Settings: email.Config{From: "zwatch@nas1.example.net", To: to,
			SMTP: email.SMTP{Host: "127.0.0.1", Port: port, TLS: mode, Username: user,
				Password: config.Secret{Value: pass}, CAFile: caFile}},
	}
}

// OpenBus starts an embedded bus in dir.
func OpenBus(t testing.TB, dir string) *bus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: dir, Name: "notifiers-test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Publish puts n in the outbox, as the rule engine does.
func Publish(t testing.TB, b *bus.Bus, n alert.Notification) {
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

// RunNotifiers starts delivery.Run (the outbox) in the background; stop cancels it and
// waits.
func RunNotifiers(t testing.TB, b *bus.Bus, cfg config.NotifyConfig, opts delivery.Options) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- delivery.Run(ctx, b, cfg, opts, Log(t)) }()
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

// Log is a logger that shows with go test -v only.
func Log(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// WaitFor polls cond until it holds, failing the test after d.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FreePort is a loopback port nothing listens on (for now).
func FreePort(t testing.TB) int {
	t.Helper()
	return testutil.FreePort(t)
}

// URLishErr wraps an error the way a dial error reads.
type URLishErr struct{ Err error }

func (e *URLishErr) Error() string { return "dial tcp 127.0.0.1:25: " + e.Err.Error() }
func (e *URLishErr) Unwrap() error { return e.Err }

// RefusedErr is a refused TCP connection.
func RefusedErr() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// DNSErr is a host name that does not resolve.
func DNSErr(name string) error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}}
}
