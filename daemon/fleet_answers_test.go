package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/fleet/clustertest"
	"github.com/zwatch/zwatch/internal/catalog"
)

// pollWatch is a Telegram bot reached by each server under its own path
// prefix (api_url …/<server>): it counts each server's getUpdates and any
// one made while another server's was still open (Telegram's 409).
type pollWatch struct {
	mu        sync.Mutex
	open      map[string]int
	polls     map[string]int
	conflicts []string
}

func (p *pollWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	server, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !strings.HasSuffix(rest, "/getUpdates") {
		_, _ = io.WriteString(w, `{"ok":true,"result":true}`)
		return
	}
	p.mu.Lock()
	for other, n := range p.open {
		if other != server && n > 0 {
			p.conflicts = append(p.conflicts, server+" polled while "+other+" did")
		}
	}
	p.open[server]++
	p.polls[server]++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.open[server]--
		p.mu.Unlock()
	}()
	select {
	case <-r.Context().Done():
		return
	case <-time.After(100 * time.Millisecond):
	}
	_, _ = io.WriteString(w, `{"ok":true,"result":[]}`)
}

func (p *pollWatch) count(server string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls[server]
}

// TestFleetServersPollOneBotOnce: two servers of a fleet (daemon.Run on
// a three-node cluster) run the same Telegram channel with answer
// buttons. Only one polls getUpdates at a time; when it stops, the other
// takes the bot over within fleet.lease_ttl.
func TestFleetServersPollOneBotOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster and two servers")
	}
	cl := clustertest.Start(t, "../configs/nats-cluster")
	pw := &pollWatch{open: map[string]int{}, polls: map[string]int{}}
	api := httptest.NewServer(pw)
	t.Cleanup(api.Close)
	const ttl = 3 * time.Second
	start := func(name string) *fleetServer {
		cfgText := fmt.Sprintf(`
host: %s
role: server
state_dir: %s
bus:
  url: %q
  user: %s
  password: %s
  tls:
    ca: %s
  replicas: 3
fleet:
  lease_ttl: %s
http: {listen: ""}
notify:
  console: false
  channels:
    - name: phone
      type: telegram
      token: "123456:ABC-DEF"
      chat_ids: ["123456789"]
      answer_users: ["123456789"]
      api_url: %s/%s
`, name, t.TempDir(), cl.URL(), clustertest.ServerUser, clustertest.ServerPassword, cl.CA, ttl, api.URL, name)
		l, err := config.Parse(strings.NewReader(cfgText), catalog.Config())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s := &fleetServer{cancel: cancel, done: make(chan error, 1)}
		log := slog.New(slog.DiscardHandler)
		if os.Getenv("ZWATCH_FLEET_LOG") != "" {
			log = slog.New(slog.NewTextHandler(os.Stderr, nil)).With("server", name)
		}
		go func() { s.done <- Run(ctx, &l.Config, Options{}, log) }()
		t.Cleanup(func() { s.stop(t) })
		return s
	}
	servers := map[string]*fleetServer{"srv-a": start("srv-a"), "srv-b": start("srv-b")}
	deadline := time.Now().Add(60 * time.Second)
	for pw.count("srv-a")+pw.count("srv-b") < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no server polled getUpdates within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(ttl) // both keep running; one polls
	holder, standby := "srv-a", "srv-b"
	if pw.count("srv-b") > pw.count("srv-a") {
		holder, standby = standby, holder
	}
	if n := pw.count(standby); n != 0 {
		t.Fatalf("both servers poll the bot: %s %d times, %s %d", holder, pw.count(holder), standby, n)
	}
	servers[holder].stop(t)
	stopped := time.Now()
	for pw.count(standby) < 2 {
		if time.Since(stopped) > 2*ttl {
			t.Fatalf("%s did not take the bot over within %v of %s stopping", standby, 2*ttl, holder)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%s polled; it stopped and %s polls after %v", holder, standby, time.Since(stopped).Round(time.Millisecond))
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if len(pw.conflicts) > 0 {
		t.Errorf("two servers polled the bot at once: %q", pw.conflicts)
	}
}
