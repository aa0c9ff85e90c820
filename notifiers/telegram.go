package notifiers

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/zwatch/zwatch/config"
)

const telegramAPI = "https://api.telegram.org"

// telegram calls the Bot API's sendMessage directly: notify's telegram
// service calls getMe in its constructor, keeps the parse mode in a
// package variable, and has no context or base URL.
type telegram struct {
	api, token string
	chats      []string
	client     *http.Client
	// sent remembers chats that already got a notification whose send to
	// another chat failed, so a retry does not repeat it to them.
	mu   sync.Mutex
	sent map[string]map[string]bool
}

func newTelegram(cc config.ChannelConfig, hc *http.Client) *telegram {
	api := strings.TrimRight(cc.APIURL, "/")
	if api == "" {
		api = telegramAPI
	}
	return &telegram{api: api, token: cc.Token.Value, chats: cc.ChatIDs, client: hc, sent: map[string]map[string]bool{}}
}

func (t *telegram) Send(ctx context.Context, subject, text string) error {
	m := messageFrom(ctx, subject, text)
	for _, chat := range t.chats {
		if m.ID != "" && t.already(m.ID, chat) {
			continue
		}
		// Plain text, no parse_mode: alert text holds <, > and _ that
		// Telegram's HTML or Markdown parsers would reject.
		payload := map[string]any{
			"chat_id":                  chatID(chat),
			"text":                     cutUTF16(m.Text, telegramTextMax),
			"disable_web_page_preview": true,
			"disable_notification":     silent(m),
		}
		err := do(ctx, t.client, request{
			service: "telegram", url: t.api + "/bot" + t.token + "/sendMessage",
			contentType: "application/json", payload: payload, secrets: []string{t.token},
			check: func(raw []byte) error {
				var r struct {
					OK bool `json:"ok"`
				}
				if json.Unmarshal(raw, &r) == nil && !r.OK {
					return &ServiceError{Service: "telegram", Status: http.StatusOK, Detail: detail(raw)}
				}
				return nil
			},
		})
		if err != nil {
			return err
		}
		if m.ID != "" && len(t.chats) > 1 {
			t.mark(m.ID, chat)
		}
	}
	t.forget(m.ID)
	return nil
}

// chatID sends numeric ids as numbers and @channelnames as strings.
func chatID(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

func (t *telegram) already(id, chat string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent[id][chat]
}

func (t *telegram) mark(id, chat string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sent[id] == nil {
		t.sent[id] = map[string]bool{}
	}
	t.sent[id][chat] = true
}

func (t *telegram) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sent, id)
}
