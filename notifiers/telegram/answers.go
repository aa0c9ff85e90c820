package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Answers from Telegram: every page carries two buttons (Acknowledge,
// Snooze 24 h) whose data the install's key signs; a loop long-polls
// getUpdates (outbound only: it works behind NAT and away from home) and
// turns each tap of a user named in answer_users into the answer, tells
// the user how it went (answerCallbackQuery) and puts who answered on the
// message (editMessageReplyMarkup). A tap from anyone else, or with data
// zwatch did not sign, is refused and logged, and the reply does not say
// whether the incident exists.

const (
	// pollTimeout is getUpdates' long-poll; the request itself may take
	// this long, so it has its own client.
	pollTimeout = 50 * time.Second
	// maxUpdatesBytes bounds one getUpdates answer (100 updates).
	maxUpdatesBytes = 1 << 20
	// doneData is the data of the button that says who answered.
	doneData = "zw1 done"
)

var _ channel.Answering = (*Sender)(nil)

// EnableAnswers makes pages carry the buttons, when answer_users lets
// someone answer.
func (t *Sender) EnableAnswers(key answer.Key, name string) bool {
	if len(t.answerers) == 0 || len(key) == 0 {
		return false
	}
	t.key, t.name = key, name
	return true
}

// buttons is a page's reply_markup, or nil when it carries none: answers
// off, not a page, or no incident to answer. Acknowledge and Snooze; then
// Replace when the page offers the replacement of its disk; then a link to
// the incident on the status page (with its guide) when there is one.
func (t *Sender) buttons(m channel.Message) any {
	if t.key == nil || m.Resolved || len(m.Notification.Alerts) == 0 {
		return nil
	}
	id := m.Incident()
	if id == "" {
		return nil
	}
	rows := [][]button{{
		{text: "✅ Acknowledge", data: t.key.Sign(answer.Action{Verb: answer.Ack, Incident: id})},
		{text: "💤 Snooze 24 h", data: t.key.Sign(answer.Action{Verb: answer.Snooze, Incident: id})},
	}}
	if m.Replace != "" {
		rows = append(rows, []button{{text: "🔁 Replace " + m.Replace + "…", data: t.key.Sign(answer.Action{Verb: answer.Replace, Incident: id})}})
	}
	if m.PageURL != "" {
		rows = append(rows, []button{{text: "📖 Open guide", url: m.PageURL}})
	}
	return keyboardRows(rows...)
}

// button is an inline keyboard button: data comes back in a callback, a
// url opens in the browser.
type button struct{ text, data, url string }

// keyboard is an InlineKeyboardMarkup of one row.
func keyboard(bs ...button) map[string]any { return keyboardRows(bs) }

// keyboardRows is an InlineKeyboardMarkup
// (https://core.telegram.org/bots/api#inlinekeyboardmarkup).
func keyboardRows(rows ...[]button) map[string]any {
	out := make([][]map[string]string, 0, len(rows))
	for _, bs := range rows {
		row := make([]map[string]string, 0, len(bs))
		for _, b := range bs {
			if b.url != "" {
				row = append(row, map[string]string{"text": b.text, "url": b.url})
			} else {
				row = append(row, map[string]string{"text": b.text, "callback_data": b.data})
			}
		}
		out = append(out, row)
	}
	return map[string]any{"inline_keyboard": out}
}

// update is the part of an Update the loop reads
// (https://core.telegram.org/bots/api#update).
type update struct {
	UpdateID      int64          `json:"update_id"`
	CallbackQuery *callbackQuery `json:"callback_query"`
}

// callbackQuery (https://core.telegram.org/bots/api#callbackquery).
type callbackQuery struct {
	ID   string `json:"id"`
	From struct {
		ID        int64  `json:"id"`
		Username  string `json:"username"`
		FirstName string `json:"first_name"`
	} `json:"from"`
	Message *struct {
		MessageID int64 `json:"message_id"`
		Chat      struct {
			ID int64 `json:"id"`
		} `json:"chat"`
	} `json:"message"`
	Data string `json:"data"`
}

// Answers long-polls getUpdates until ctx ends. Telegram keeps taps for a
// day, so a restart or an outage loses none. In a fleet the outbox runs it
// on one server at a time (AnswerAccount); a second poller for the same
// bot all the same (another install) makes Telegram end one of the two
// requests (409), and that one waits and tries again.
func (t *Sender) Answers(ctx context.Context, do answer.Func, log *slog.Logger) error {
	if t.key == nil {
		return nil
	}
	client := &http.Client{Timeout: t.poll + 20*time.Second}
	if t.client != nil && t.client.Transport != nil {
		client.Transport = t.client.Transport
	}
	var offset int64
	failures := 0
	for ctx.Err() == nil {
		ups, err := t.getUpdates(ctx, client, offset)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			failures++
			wait := answer.RetryWait(failures)
			if failures == 1 || failures%10 == 0 {
				log.Warn("telegram answers: getUpdates failed; taps wait at Telegram", "channel", t.name, "err", err, "retry_in", wait, "failures", failures)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			continue
		}
		failures = 0
		for _, u := range ups {
			offset = max(offset, u.UpdateID+1)
			if u.CallbackQuery != nil {
				t.handle(ctx, u.CallbackQuery, do, log)
			}
		}
	}
	return nil
}

// getUpdates asks for the taps after offset.
func (t *Sender) getUpdates(ctx context.Context, client *http.Client, offset int64) ([]update, error) {
	body, err := json.Marshal(map[string]any{"offset": offset, "timeout": int(t.poll / time.Second), "allowed_updates": []string{"callback_query"}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.api+"/bot"+t.token+"/getUpdates", strings.NewReader(string(body)))
	if err != nil {
		return nil, errors.New("telegram getUpdates: bad request URL") // the URL holds the token
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, channel.Redact(fmt.Errorf("telegram getUpdates: %w", err), t.token)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxUpdatesBytes+1))
	if err != nil {
		return nil, channel.Redact(fmt.Errorf("telegram getUpdates: %w", err), t.token)
	}
	if len(raw) > maxUpdatesBytes {
		return nil, fmt.Errorf("telegram getUpdates: answer over %d bytes", maxUpdatesBytes)
	}
	var r struct {
		OK          bool     `json:"ok"`
		Description string   `json:"description"`
		Result      []update `json:"result"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("telegram getUpdates: HTTP %d, not the Bot API's JSON: %.120q", resp.StatusCode, raw)
	}
	if !r.OK {
		return nil, channel.Redact(fmt.Errorf("telegram getUpdates: HTTP %d: %s", resp.StatusCode, r.Description), t.token)
	}
	return r.Result, nil
}

// handle carries out one tap.
func (t *Sender) handle(ctx context.Context, cq *callbackQuery, do answer.Func, log *slog.Logger) {
	who := whoTapped(cq)
	if !t.answerers[cq.From.ID] {
		log.Warn("telegram answers: a tap from a user not in answer_users was refused", "channel", t.name, "user_id", cq.From.ID, "user", who)
		t.reply(ctx, cq, "You may not answer this zwatch's pages.")
		return
	}
	if cq.Data == doneData {
		t.reply(ctx, cq, "Already answered.")
		return
	}
	act, err := t.key.Verify(cq.Data)
	if err != nil {
		log.Warn("telegram answers: a tap with data zwatch did not sign was refused", "channel", t.name, "user", who)
		t.reply(ctx, cq, "This button is not valid.")
		return
	}
	if answer.ReplaceVerb(act.Verb) {
		t.handleReplace(ctx, cq, act, who, do, log)
		return
	}
	out, err := do(ctx, act, who, "telegram:"+t.name)
	var text, done string
	switch {
	case errors.Is(err, answer.ErrGone):
		text, done = "This incident is over.", "Over"
	case err != nil:
		log.Error("telegram answers: the answer could not be recorded", "channel", t.name, "incident", act.Incident, "verb", act.Verb, "err", err)
		t.reply(ctx, cq, "zwatch could not record that; try again in a minute.")
		return
	case act.Verb == answer.Snooze:
		text = "Snoozed until " + out.Until.Local().Format("Mon 15:04")
		done = "💤 Snoozed by " + who + " until " + out.Until.Local().Format("Mon 15:04")
	default:
		text = "Acknowledged: no repeats; a change for the worse pages again."
		done = "✅ Acknowledged by " + who
	}
	log.Info("telegram answers: incident answered", "channel", t.name, "incident", act.Incident, "verb", act.Verb, "by", who)
	t.reply(ctx, cq, text)
	if cq.Message != nil {
		t.call(ctx, "editMessageReplyMarkup", map[string]any{"chat_id": cq.Message.Chat.ID, "message_id": cq.Message.MessageID,
			"reply_markup": keyboard(button{text: done, data: doneData})})
	}
}

// whoTapped names the user as people know them: @username, else the first
// name and the id.
func whoTapped(cq *callbackQuery) string {
	if cq.From.Username != "" {
		return "@" + cq.From.Username
	}
	return strings.TrimSpace(cq.From.FirstName + " (" + strconv.FormatInt(cq.From.ID, 10) + ")")
}

// reply answers the callback query, so the app stops its spinner.
func (t *Sender) reply(ctx context.Context, cq *callbackQuery, text string) {
	t.call(ctx, "answerCallbackQuery", map[string]any{"callback_query_id": cq.ID, "text": text})
}

// call makes one Bot API call whose answer only matters for the log.
func (t *Sender) call(ctx context.Context, method string, payload map[string]any) {
	_ = channel.Do(ctx, t.client, channel.Request{
		Service: "telegram", URL: t.api + "/bot" + t.token + "/" + method,
		ContentType: "application/json", Payload: payload, Secrets: []string{t.token},
	})
}
