package fleet

import (
	"context"
	"encoding/json"
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

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/fleet/clustertest"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

const (
	tgToken = "123456:ABC-DEF-fleet-lease"
	tgUser  = 123456789
)

// tgBot is one Telegram bot as the Bot API serves it to every server of a
// fleet: each server reaches it under its own path prefix (/srv-a/bot…), so
// the bot knows who polls; a getUpdates while another server's is open is
// refused with 409, as Telegram does, and counted.
type tgBot struct {
	mu        sync.Mutex
	polling   map[string]int // server -> getUpdates open
	polls     map[string]int // server -> getUpdates made
	conflicts []string
	updates   []string // update JSON, update_id 100, 101, …
	first     int64    // update_id of updates[0]
	confirmed int64    // highest offset seen
	replies   int
}

func newTGBot(t *testing.T) (*tgBot, *httptest.Server) {
	bot := &tgBot{polling: map[string]int{}, polls: map[string]int{}, first: 100}
	srv := httptest.NewServer(http.HandlerFunc(bot.serve))
	t.Cleanup(srv.Close)
	return bot, srv
}

func (bot *tgBot) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	server, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if rest != "bot"+tgToken+"/getUpdates" {
		bot.mu.Lock()
		if strings.HasSuffix(rest, "/answerCallbackQuery") {
			bot.replies++
		}
		bot.mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true,"result":true}`)
		return
	}
	var req struct {
		Offset int64 `json:"offset"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	bot.mu.Lock()
	for other, n := range bot.polling {
		if other != server && n > 0 {
			bot.conflicts = append(bot.conflicts, fmt.Sprintf("%s polled while %s's getUpdates was open", server, other))
			bot.mu.Unlock()
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}`)
			return
		}
	}
	bot.polling[server]++
	bot.polls[server]++
	// An offset confirms every update before it (Bot API getUpdates).
	bot.confirmed = max(bot.confirmed, req.Offset)
	for len(bot.updates) > 0 && bot.first < req.Offset {
		bot.updates, bot.first = bot.updates[1:], bot.first+1
	}
	pending := append([]string(nil), bot.updates...)
	bot.mu.Unlock()
	defer func() {
		bot.mu.Lock()
		bot.polling[server]--
		bot.mu.Unlock()
	}()
	if len(pending) == 0 {
		select { // a long poll with nothing new
		case <-r.Context().Done():
			return
		case <-time.After(150 * time.Millisecond):
		}
	}
	_, _ = io.WriteString(w, `{"ok":true,"result":[`+strings.Join(pending, ",")+`]}`)
}

// tap queues a tap on a page's button carrying data.
func (bot *tgBot) tap(data string) {
	bot.mu.Lock()
	defer bot.mu.Unlock()
	id := bot.first + int64(len(bot.updates))
	u, _ := json.Marshal(map[string]any{"update_id": id, "callback_query": map[string]any{
		"id": fmt.Sprint("cq", id), "data": data, "from": map[string]any{"id": tgUser, "username": "alice", "first_name": "Alice"},
		"message": map[string]any{"message_id": 1365, "chat": map[string]any{"id": tgUser}},
	}})
	bot.updates = append(bot.updates, string(u))
}

func (bot *tgBot) count(server string) int {
	bot.mu.Lock()
	defer bot.mu.Unlock()
	return bot.polls[server]
}

func (bot *tgBot) state() (conflicts []string, confirmed int64, replies int) {
	bot.mu.Lock()
	defer bot.mu.Unlock()
	return append([]string(nil), bot.conflicts...), bot.confirmed, bot.replies
}

// answerServer is one zwatch server's notifiers: delivery.Run with the
// channel's answers under fleet leases.
type answerServer struct {
	name   string
	b      *bus.Bus
	cancel context.CancelFunc
	done   chan struct{}
}

// TestAnswerReaderOneAtATime: two, then three servers sharing one NATS
// server run the same Telegram channel with answer buttons. Only the lease
// holder polls getUpdates (the bot never sees two polls at once, so never
// answers 409), a tap is carried out once, a crashed holder's reading moves
// to another server within the lease TTL and a renewal round, and a
// cleanly stopped one's within a renewal round. The lease key is a digest
// of the token, the same whatever api_url each server reaches the bot by.
func TestAnswerReaderOneAtATime(t *testing.T) {
	srv := testutil.StartNATS(t, -1, t.TempDir())
	t.Cleanup(srv.Shutdown)
	testAnswerReaderOneAtATime(t, 2*time.Second, 1, func(ctx context.Context, name string) *bus.Bus {
		b, err := bus.Open(ctx, bus.Options{URL: srv.ClientURL(), FactSubjects: facts.StreamSubjects(), Name: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		return b
	})
}

// The same on a real three-node cluster with every bucket on three nodes.
func TestAnswerReaderOneAtATimeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	cl := clustertest.Start(t, "../configs/nats-cluster")
	testAnswerReaderOneAtATime(t, 3*time.Second, 3, func(ctx context.Context, name string) *bus.Bus {
		return openClusterServer(ctx, t, cl, name)
	})
}

func testAnswerReaderOneAtATime(t *testing.T, ttl time.Duration, replicas int, open func(ctx context.Context, name string) *bus.Bus) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bot, api := newTGBot(t)
	key := answer.Key(strings.Repeat("k", 32))
	var mu sync.Mutex
	var answered []string
	do := func(_ context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
		mu.Lock()
		defer mu.Unlock()
		answered = append(answered, act.Verb+" "+act.Incident+" by "+by+" from "+source)
		return answer.Outcome{Host: "nas1", Alerts: 1}, nil
	}
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	start := func(name string) *answerServer {
		b := open(ctx, name)
		cfg := config.DefaultNotify()
		cfg.Console = false
		cfg.SendTimeout = config.Duration(5 * time.Second)
		cfg.Channels = []config.ChannelConfig{{Name: "phone", Type: telegram.Service.Name(), Settings: telegram.Config{
			APIURL: api.URL + "/" + name, Token: config.Secret{Value: tgToken}, ChatIDs: []string{fmt.Sprint(tgUser)},
			AnswerUsers: []string{fmt.Sprint(tgUser)},
		}}}
		sctx, scancel := context.WithCancel(ctx)
		s := &answerServer{name: name, b: b, cancel: scancel, done: make(chan struct{})}
		opts := delivery.Options{
			Answers: &delivery.Answers{Key: key, Do: do},
			Lease:   Leaser(b.JS, name, ttl, replicas, log.With("server", name)),
		}
		go func() {
			defer close(s.done)
			if err := delivery.Run(sctx, b, cfg, opts, log.With("server", name)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}()
		return s
	}
	lease := delivery.AnswerLease("telegram", channel.AccountDigest(tgToken))
	if strings.Contains(lease, tgToken) || strings.Contains(lease, "ABC-DEF") {
		t.Fatalf("the lease key %q shows the token", lease)
	}
	a, b := start("srv-a"), start("srv-b")
	// An observer of its own: a crashed server's connection is gone.
	kv, err := LeaseKV(ctx, open(ctx, "observer").JS, ttl, replicas)
	if err != nil {
		t.Fatal(err)
	}
	holder := func() string {
		gctx, gcancel := context.WithTimeout(ctx, 2*time.Second)
		defer gcancel()
		e, err := kv.Get(gctx, lease)
		if err != nil {
			return ""
		}
		return string(e.Value())
	}
	// polling waits until server polls, and says how long that took.
	polling := func(what, server string, within time.Duration) time.Duration {
		t.Helper()
		began, n := time.Now(), bot.count(server)
		for bot.count(server) < n+2 { // one more could be in flight already
			if time.Since(began) > within {
				t.Fatalf("%s: %s made no getUpdates in %v (lease held by %q)", what, server, within, holder())
			}
			time.Sleep(20 * time.Millisecond)
		}
		return time.Since(began)
	}
	servers := map[string]*answerServer{"srv-a": a, "srv-b": b}

	first := ""
	eventually(t, 20*time.Second, "a lease holder", func() bool { first = holder(); return first != "" })
	polling("the first holder", first, 10*time.Second)
	time.Sleep(ttl) // renewals go on; the other stands by
	other := map[string]string{"srv-a": "srv-b", "srv-b": "srv-a"}[first]
	if n := bot.count(other); n != 0 {
		t.Fatalf("%s polled %d times while %s held the lease", other, n, first)
	}
	t.Logf("%s holds the lease %s and polls; %s stands by", first, lease, other)

	// A tap is carried out once, by the holder.
	bot.tap(key.Sign(answer.Action{Verb: answer.Ack, Incident: "3f2a9c1e"}))
	eventually(t, 10*time.Second, "the tap confirmed", func() bool { _, confirmed, _ := bot.state(); return confirmed > 100 })

	// A crash: the holder's connection drops, it cannot renew and stops
	// polling after 2/3 TTL; the lease expires after TTL.
	servers[first].b.NC.Close()
	took := polling("after the holder crashed", other, 3*ttl)
	t.Logf("crash of %s: %s polls after %v (lease TTL %v)", first, other, took, ttl)
	if took > ttl+ttl/3+time.Second {
		t.Errorf("the crashed holder's reading moved after %v; want within the TTL %v and a renewal round", took, ttl)
	}
	if h := holder(); h != other {
		t.Errorf("lease held by %q after the crash, want %s", h, other)
	}
	servers[first].cancel()
	<-servers[first].done
	before := bot.count(first)

	// A clean stop hands over at once.
	c := start("srv-c")
	time.Sleep(ttl / 2)
	if n := bot.count("srv-c"); n != 0 {
		t.Fatalf("srv-c polled %d times while %s held the lease", n, other)
	}
	servers[other].cancel()
	<-servers[other].done
	took = polling("after the holder stopped", "srv-c", 2*ttl)
	t.Logf("clean stop of %s: srv-c polls after %v", other, took)
	if took > ttl/3+time.Second {
		t.Errorf("a clean stop's reading moved after %v; want about one renewal round (%v)", took, ttl/3)
	}
	c.cancel()
	<-c.done

	conflicts, _, replies := bot.state()
	if len(conflicts) > 0 {
		t.Errorf("two servers polled the bot at once:\n%s", strings.Join(conflicts, "\n"))
	}
	if n := bot.count(first); n != before {
		t.Errorf("the crashed server polled %d more times after it stopped", n-before)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(answered) != 1 || answered[0] != "ack 3f2a9c1e by @alice from telegram:phone" || replies != 1 {
		t.Errorf("one tap, answered %q, %d replies to it", answered, replies)
	}
	// The clean stops gave the lease back.
	if h := holder(); h != "" {
		t.Errorf("lease still held by %q after every server stopped", h)
	}
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
