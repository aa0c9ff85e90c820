package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
)

// TestSystemdReadyWatchdogAndHeartbeatURL runs the daemon the way systemd
// does (NOTIFY_SOCKET, WATCHDOG_USEC) and checks that it says READY=1, feeds
// the watchdog while healthy, pings the heartbeat URL, and says STOPPING=1.
func TestSystemdReadyWatchdogAndHeartbeatURL(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "2000000")

	var pings atomic.Int32
	hc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { pings.Add(1) }))
	defer hc.Close()

	l, err := config.Parse(strings.NewReader(fmt.Sprintf(`
host: nas1
state_dir: %s
zfs: {enabled: false}
smart: {enabled: false}
heartbeat: {url: %s, interval: 10s}
`, filepath.Join(dir, "state"), hc.URL)), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, &l.Config, Options{}, slog.New(slog.NewTextHandler(io.Discard, nil))) }()

	got := map[string]int{}
	buf := make([]byte, 256)
	deadline := time.Now().Add(15 * time.Second)
	for got["READY=1"] == 0 || got["WATCHDOG=1"] < 2 {
		conn.SetReadDeadline(deadline)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("systemd messages so far %v: %v", got, err)
		}
		got[string(buf[:n])]++
	}
	if pings.Load() == 0 {
		t.Error("heartbeat URL never pinged")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no STOPPING=1 at shutdown (got %v)", got)
		}
		if string(buf[:n]) == "STOPPING=1" {
			break
		}
	}
}
