package daemon

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/views/statusview"
)

// TestFirstMinuteOfMakeRun starts zwatch as `make run` does, on the example
// config (state and page moved to the test's own places), on this machine
// as it is: usually no ZFS. What a newcomer sees first must be clean:
//   - a quiet kernel log that zwatch reads is working, not "has not
//     succeeded yet" on the page;
//   - no log line names the same attribute twice.
func TestFirstMinuteOfMakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	example, err := os.ReadFile("../configs/zwatch.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(example)
	for old, repl := range map[string]string{
		"state_dir: /var/lib/zwatch": "state_dir: " + filepath.Join(t.TempDir(), "state"),
		"listen: 127.0.0.1:8931":     `listen: "127.0.0.1:0"`,
		`host: ""`:                   "host: newcomer",
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("the example config no longer has %q: update this test", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	addrs := make(chan net.Addr, 1)
	logs, stop := startDaemon(t, cfg, Options{HeartbeatEvery: time.Second, HTTPReady: func(a net.Addr) { addrs <- a }})
	var base string
	select {
	case a := <-addrs:
		base = "http://" + a.String()
	case <-time.After(30 * time.Second):
		t.Fatal("the status page did not listen within 30 s")
	}

	kmsg, err := os.Open("/dev/kmsg")
	readable := err == nil
	if readable {
		kmsg.Close()
	}
	var host statusview.Host
	deadline := time.Now().Add(30 * time.Second)
	for {
		host = statusview.Host{}
		body := getSoon(base + "/api/host?host=newcomer") // 404 until the first heartbeat
		if json.Unmarshal(body, &host) == nil && host.Collectors != nil &&
			(!readable || host.Collectors["kernel_log"].LastOK != nil) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat with the kernel log read (readable %v) within 30 s: %s", readable, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	page := string(get(t, base+"/"))
	if readable && strings.Contains(page, "kernel_log has not succeeded yet") {
		t.Error("the page calls a quiet kernel log that zwatch reads a blind spot")
	}
	stop()

	key := regexp.MustCompile(`(?:^| )([a-z_.]+)=`)
	for _, line := range strings.Split(logs.String(), "\n") {
		seen := map[string]bool{}
		for _, m := range key.FindAllStringSubmatch(quoted.ReplaceAllString(line, `""`), -1) {
			if seen[m[1]] {
				t.Errorf("the log line names %s twice: %s", m[1], line)
			}
			seen[m[1]] = true
		}
	}
}

// quoted matches a quoted logfmt value, whose text may hold " k=".
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// getSoon is the body of a GET that answered 200, else nil.
func getSoon(url string) []byte {
	resp, err := http.Get(url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	return body
}
