package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/views/statusview"
)

// fakeTelegram is the Bot API over HTTP as a phone's user sees it: it keeps
// the Acknowledge button of the first page zwatch sends, and the next
// getUpdates hands back a tap on it by user alice (123456789). Shapes as
// documented (notifiers/telegram/testdata/SOURCES.md).
type fakeTelegram struct {
	mu      sync.Mutex
	ackData string
	tapped  bool
	replies chan string
}

func (f *fakeTelegram) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/sendMessage"):
		var m struct {
			ReplyMarkup struct {
				Keyboard [][]struct {
					Text string `json:"text"`
					Data string `json:"callback_data"`
				} `json:"inline_keyboard"`
			} `json:"reply_markup"`
		}
		_ = json.Unmarshal(body, &m)
		f.mu.Lock()
		if f.ackData == "" && len(m.ReplyMarkup.Keyboard) > 0 && len(m.ReplyMarkup.Keyboard[0]) > 0 {
			f.ackData = m.ReplyMarkup.Keyboard[0][0].Data
		}
		f.mu.Unlock()
		fmt.Fprint(w, `{"ok":true,"result":{"message_id":7,"chat":{"id":123456789,"type":"private"},"date":1796620000}}`)
	case strings.HasSuffix(r.URL.Path, "/getUpdates"):
		f.mu.Lock()
		data, tap := f.ackData, f.ackData != "" && !f.tapped
		if tap {
			f.tapped = true
		}
		f.mu.Unlock()
		if !tap {
			time.Sleep(100 * time.Millisecond)
			fmt.Fprint(w, `{"ok":true,"result":[]}`)
			return
		}
		q, _ := json.Marshal(data)
		fmt.Fprintf(w, `{"ok":true,"result":[{"update_id":5001,"callback_query":{"id":"q1","from":{"id":123456789,"is_bot":false,"first_name":"Alice","username":"alice"},`+
			`"message":{"message_id":7,"chat":{"id":123456789,"type":"private"},"date":1796620000},"chat_instance":"-72039","data":%s}}]}`, q)
	case strings.HasSuffix(r.URL.Path, "/answerCallbackQuery"):
		text, _ := req["text"].(string)
		f.replies <- text
		fmt.Fprint(w, `{"ok":true,"result":true}`)
	default:
		fmt.Fprint(w, `{"ok":true,"result":true}`)
	}
}

// A tap on the Acknowledge button of a real page (capture b1: vault
// DEGRADED) acknowledges the incident in the running daemon: the tap is
// answered, and the API shows the incident's alerts acknowledged by @alice
// through telegram:phone.
func TestTelegramTapAcknowledges(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, _ := standInTools(t, dir)
	tg := &fakeTelegram{replies: make(chan string, 10)}
	srv := httptest.NewServer(tg)
	t.Cleanup(srv.Close)
	cfg := fmt.Sprintf(`
host: nas1
state_dir: %s
zfs: {zpool: %s, zfs: %s, list_interval: 1s, status_interval: 1s, follow_events: false}
smart: {enabled: false}
kernel: {enabled: false}
http: {listen: "127.0.0.1:0"}
rules: {disabled: [MonitoringBlindSpot]}
notify:
  console: false
  channels:
    - {name: phone, type: telegram, token: "123456:ABC-DEF", chat_ids: ["123456789"], answer_users: ["123456789"], api_url: %s}
`, filepath.Join(dir, "state"), zpool, zfsCmd, srv.URL)
	addrs := make(chan net.Addr, 1)
	startDaemon(t, cfg, Options{HTTPReady: func(a net.Addr) { addrs <- a }})
	var base string
	select {
	case a := <-addrs:
		base = "http://" + a.String()
	case <-time.After(30 * time.Second):
		t.Fatal("the status page did not listen within 30 s")
	}
	select {
	case r := <-tg.replies:
		if !strings.HasPrefix(r, "Acknowledged") {
			t.Fatalf("the tap was answered %q", r)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no page with buttons was tapped and answered within 60 s")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var h statusview.Host
		if body := getSoon(base + "/api/host?host=nas1"); json.Unmarshal(body, &h) == nil {
			for _, a := range h.Alerts {
				if a.Ack != nil && a.Ack.By == "@alice" && a.Ack.Source == "telegram:phone" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no alert acknowledged by @alice within 30 s of the tap")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
