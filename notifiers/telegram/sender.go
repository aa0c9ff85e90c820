package telegram

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Sender sends every notification to each chat in turn.
type Sender struct {
	api, token string
	customAPI  bool
	chats      []string
	client     *http.Client
	// sent remembers chats that already got a notification whose send to
	// another chat failed, so a retry does not repeat it to them.
	mu   sync.Mutex
	sent map[string]map[string]bool
	// answerers are the user ids answer_users lets answer; key and name
	// are set by EnableAnswers, poll is getUpdates' long-poll (answers.go).
	answerers map[int64]bool
	key       answer.Key
	name      string
	poll      time.Duration
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	api := strutil.FirstNonEmpty(strings.TrimRight(c.APIURL, "/"), DefaultAPI)
	s := &Sender{api: api, token: c.Token.Value, customAPI: c.APIURL != "", chats: c.ChatIDs, client: env.HTTP, sent: map[string]map[string]bool{},
		answerers: map[int64]bool{}, poll: pollTimeout}
	for _, u := range c.AnswerUsers {
		if id, err := strconv.ParseInt(u, 10, 64); err == nil {
			s.answerers[id] = true
		}
	}
	return s
}

var _ channel.SharedAnswers = (*Sender)(nil)

// AnswerAccount names the bot by its token alone: a bot has one update
// queue, whichever Bot API server (api_url) it is read through.
func (t *Sender) AnswerAccount() string { return channel.AccountDigest(t.token) }

// Send delivers m to every chat that has not had it yet.
func (t *Sender) Send(ctx context.Context, m channel.Message) error {
	for _, chat := range t.chats {
		if m.ID != "" && t.already(m.ID, chat) {
			continue
		}
		// Plain text, no parse_mode: alert text holds <, > and _ that
		// Telegram's HTML or Markdown parsers would reject.
		payload := map[string]any{
			"chat_id":                  chatID(chat),
			"text":                     channel.CutUTF16(m.Text, textMax),
			"disable_web_page_preview": true,
			"disable_notification":     m.Silent(),
		}
		if kb := t.buttons(m); kb != nil {
			payload["reply_markup"] = kb
		}
		_, err := t.sendMessage(ctx, payload)
		if err != nil && m.PageURL != "" && buttonURLRefused(err) {
			// Telegram refuses some URLs in buttons (BUTTON_URL_INVALID):
			// the page goes without Open guide rather than not at all.
			m.PageURL = ""
			if kb := t.buttons(m); kb != nil {
				payload["reply_markup"] = kb
			}
			_, err = t.sendMessage(ctx, payload)
		}
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

// buttonURLRefused reports whether Telegram refused a button's URL.
func buttonURLRefused(err error) bool {
	se, ok := channel.AsServiceError(err)
	return ok && se.Status == http.StatusBadRequest && strings.Contains(strings.ToUpper(se.Detail), "BUTTON_URL")
}

// sendMessage makes one sendMessage call and returns the message's id; an
// ok:false answer is an error.
func (t *Sender) sendMessage(ctx context.Context, payload map[string]any) (int64, error) {
	var id int64
	err := channel.Do(ctx, t.client, channel.Request{
		Service: "telegram", URL: t.api + "/bot" + t.token + "/sendMessage",
		ContentType: "application/json", Payload: payload, Secrets: []string{t.token},
		Check: func(raw []byte) error {
			var r struct {
				OK     bool `json:"ok"`
				Result struct {
					MessageID int64 `json:"message_id"`
				} `json:"result"`
			}
			if json.Unmarshal(raw, &r) == nil && !r.OK {
				return &channel.ServiceError{Service: "telegram", Status: http.StatusOK, Detail: channel.Detail(raw)}
			}
			id = r.Result.MessageID
			return nil
		},
	})
	return id, err
}

// chatID sends numeric ids as numbers and @channelnames as strings.
func chatID(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

func (t *Sender) already(id, chat string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent[id][chat]
}

func (t *Sender) mark(id, chat string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sent[id] == nil {
		t.sent[id] = map[string]bool{}
	}
	t.sent[id][chat] = true
}

func (t *Sender) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sent, id)
}

// Hint tells a token Telegram does not know from a chat it does not know.
func (t *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		return ""
	}
	switch {
	case se.Status == 401 || se.Status == 404:
		return "Telegram does not know this bot token: copy it again from @BotFather (digits:letters)"
	case strings.Contains(strings.ToLower(se.Detail), "chat not found"):
		return "Telegram does not know this chat id: send the bot a message first (or add it to the group), then take the id from getUpdates"
	case se.Status == 403:
		return "the bot may not write to this chat: unblock it, or add it to the group/channel with permission to post"
	}
	return ""
}

// AddressKey is api_url when set.
func (t *Sender) AddressKey() string {
	if t.customAPI {
		return "api_url"
	}
	return "the service address"
}
