package main

// A fake of the Telegram Bot API calls zwatch makes, for the answer
// scenario: sendMessage (kept, with its buttons), getUpdates (a long poll
// that hands out the taps queued by /tg-tap), answerCallbackQuery and
// editMessageReplyMarkup. Every call is appended to tg.jsonl beside the
// webhook's file: {"recv_ns", "method", "payload"}, and each tap handed out
// by getUpdates as method "tap-delivered". The shapes are the Bot API's
// (notifiers/telegram/testdata/SOURCES.md).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

type tgMessage struct {
	ID      int64
	ChatID  json.RawMessage
	Text    string
	Buttons [][2]string // text, callback_data
}

type tgFake struct {
	mu      sync.Mutex
	log     *os.File
	msgs    []tgMessage
	updates []map[string]any
	nextID  int64
	wake    chan struct{}
}

func newTGFake(path string) (*tgFake, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &tgFake{log: f, nextID: 1000, wake: make(chan struct{}, 1)}, nil
}

// record appends one call to tg.jsonl; t.mu is held.
func (t *tgFake) record(method string, payload []byte) {
	if !json.Valid(payload) {
		payload, _ = json.Marshal(string(payload))
	}
	b, _ := json.Marshal(struct {
		RecvNS  int64           `json:"recv_ns"`
		Method  string          `json:"method"`
		Payload json.RawMessage `json:"payload"`
	}{time.Now().UnixNano(), method, payload})
	_, _ = t.log.Write(append(b, '\n'))
}

func ok(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

// bot serves /tg/bot<token>/<method>.
func (t *tgFake) bot(w http.ResponseWriter, r *http.Request) {
	method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	if method == "getUpdates" {
		t.getUpdates(w, r, body)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.record(method, body)
	switch method {
	case "sendMessage":
		var m struct {
			ChatID      json.RawMessage `json:"chat_id"`
			Text        string          `json:"text"`
			ReplyMarkup *struct {
				InlineKeyboard [][]struct {
					Text         string `json:"text"`
					CallbackData string `json:"callback_data"`
				} `json:"inline_keyboard"`
			} `json:"reply_markup"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			w.WriteHeader(400)
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
			return
		}
		t.nextID++
		msg := tgMessage{ID: t.nextID, ChatID: m.ChatID, Text: m.Text}
		if m.ReplyMarkup != nil {
			for _, row := range m.ReplyMarkup.InlineKeyboard {
				for _, b := range row {
					msg.Buttons = append(msg.Buttons, [2]string{b.Text, b.CallbackData})
				}
			}
		}
		t.msgs = append(t.msgs, msg)
		ok(w, map[string]any{"message_id": msg.ID, "date": time.Now().Unix(), "chat": map[string]any{"id": json.RawMessage(m.ChatID), "type": "private"}, "text": m.Text})
	default: // answerCallbackQuery, editMessageReplyMarkup
		ok(w, true)
	}
}

// getUpdates hands out queued taps at or after offset, waiting up to the
// request's timeout for one.
func (t *tgFake) getUpdates(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Offset  int64 `json:"offset"`
		Timeout int   `json:"timeout"`
	}
	_ = json.Unmarshal(body, &req)
	deadline := time.Now().Add(time.Duration(min(max(req.Timeout, 0), 50)) * time.Second)
	for {
		t.mu.Lock()
		var out []map[string]any
		for _, u := range t.updates {
			if u["update_id"].(int64) >= req.Offset {
				out = append(out, u)
			}
		}
		if len(out) > 0 {
			b, _ := json.Marshal(out)
			t.record("tap-delivered", b)
			t.mu.Unlock()
			ok(w, out)
			return
		}
		t.mu.Unlock()
		wait := time.Until(deadline)
		if wait <= 0 {
			ok(w, []any{})
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-t.wake:
		case <-time.After(wait):
		}
	}
}

// tap queues a tap on the button whose text contains label, of the newest
// message that has one and whose text contains every contains; it answers
// the tap's time (guest unix ns).
func (t *tgFake) tap(w http.ResponseWriter, r *http.Request) {
	label := r.URL.Query().Get("label")
	contains := r.URL.Query()["contains"]
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.msgs) - 1; i >= 0; i-- {
		m := t.msgs[i]
		match := true
		for _, c := range contains {
			match = match && strings.Contains(m.Text, c)
		}
		if !match {
			continue
		}
		for _, b := range m.Buttons {
			if !strings.Contains(b[0], label) {
				continue
			}
			id := int64(646911460 + len(t.updates))
			now := time.Now()
			t.updates = append(t.updates, map[string]any{"update_id": id, "callback_query": map[string]any{
				"id":            fmt.Sprintf("4382bfdwdsb323b%03d", len(t.updates)),
				"from":          map[string]any{"id": 123456789, "is_bot": false, "first_name": "Alice", "username": "alice", "language_code": "en"},
				"message":       map[string]any{"message_id": m.ID, "date": now.Unix(), "chat": map[string]any{"id": m.ChatID, "type": "private"}, "text": m.Text},
				"chat_instance": "-7203921983192739781",
				"data":          b[1],
			}})
			select {
			case t.wake <- struct{}{}:
			default:
			}
			fmt.Fprintln(w, now.UnixNano())
			return
		}
	}
	http.Error(w, "no message with such a button", 404)
}

// tapCmd is `sink tap URL LABEL [CONTAINS]...`: ask the serving sink for a
// tap and print its time.
func tapCmd(args []string) int {
	if len(args) < 2 {
		usage()
	}
	q := "label=" + url.QueryEscape(args[1])
	for _, c := range args[2:] {
		q += "&contains=" + url.QueryEscape(c)
	}
	resp, err := http.Get(strings.TrimRight(args[0], "/") + "/tg-tap?" + q)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, strings.TrimSpace(string(b)))
		return 1
	}
	fmt.Print(string(b))
	return 0
}
