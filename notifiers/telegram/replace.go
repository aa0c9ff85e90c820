package telegram

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// A replacement from the phone (actions.replace): the page's Replace
// button asks zwatch, which answers with a question in a new message, the
// exact command and the disk it erases, with a button per disk and
// Cancel; the confirmation's message then shows the resilver, edited in
// place, and its end comes as a new message, which rings.

// handleReplace carries out a tap of the replacement's buttons.
func (t *Sender) handleReplace(ctx context.Context, cq *callbackQuery, act answer.Action, who string, do answer.Func, log *slog.Logger) {
	out, err := do(ctx, act, who, "telegram:"+t.name)
	switch {
	case errors.Is(err, answer.ErrGone):
		t.reply(ctx, cq, "This incident is over.")
		return
	case errors.Is(err, answer.ErrClosed):
		t.reply(ctx, cq, err.Error())
		t.markDone(ctx, cq, "Closed")
		return
	case err != nil:
		log.Error("telegram answers: the replacement could not be answered", "channel", t.name, "verb", act.Verb, "err", err)
		t.reply(ctx, cq, "zwatch could not do that; try again in a minute.")
		return
	}
	log.Info("telegram answers: replacement answered", "channel", t.name, "verb", act.Verb, "by", who)
	if cq.Message == nil {
		t.reply(ctx, cq, out.Text) // no chat to write to: the reply is all there is
		return
	}
	chat, page := cq.Message.Chat.ID, cq.Message.MessageID
	switch {
	case act.Verb == answer.Replace:
		t.reply(ctx, cq, "See the message below.")
		var rows [][]button
		for _, o := range out.Ask {
			rows = append(rows, []button{{text: o.Label, data: t.key.Sign(o.Action)}})
		}
		t.message(ctx, chat, page, out.Text, rows)
	case act.Verb == answer.Cancel:
		t.reply(ctx, cq, out.Text)
		t.markDone(ctx, cq, "✖ Cancelled by "+who)
	case out.Progress == nil: // confirmed, but something changed since the question
		t.reply(ctx, cq, "Not run: see the message below.")
		t.markDone(ctx, cq, "Not run")
		t.message(ctx, chat, page, out.Text, nil)
	default:
		t.reply(ctx, cq, "Replacement started.")
		t.markDone(ctx, cq, "🔁 Confirmed by "+who)
		id := t.message(ctx, chat, page, out.Text, nil)
		go t.follow(context.WithoutCancel(ctx), chat, id, out.Text, out.Progress, log)
	}
}

// follow shows each progress line in the confirmation's message, then
// sends the last one as a new message: an edit does not ring the phone.
func (t *Sender) follow(ctx context.Context, chat, msg int64, head string, progress <-chan string, log *slog.Logger) {
	last := ""
	for line := range progress {
		last = line
		if msg != 0 {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			t.call(cctx, "editMessageText", map[string]any{"chat_id": chat, "message_id": msg, "text": channel.CutUTF16(head+"\n\n"+line, textMax)})
			cancel()
		}
	}
	if last == "" {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if t.message(cctx, chat, msg, last, nil) == 0 {
		log.Warn("telegram answers: the replacement's end could not be sent", "channel", t.name)
	}
}

// markDone replaces the tapped message's buttons with one that says what
// became of them.
func (t *Sender) markDone(ctx context.Context, cq *callbackQuery, text string) {
	if cq.Message != nil {
		t.call(ctx, "editMessageReplyMarkup", map[string]any{"chat_id": cq.Message.Chat.ID, "message_id": cq.Message.MessageID,
			"reply_markup": keyboard(button{text: text, data: doneData})})
	}
}

// message sends text to chat as a reply to replyTo, with rows of buttons,
// and returns its message_id (0 when it was not sent).
func (t *Sender) message(ctx context.Context, chat, replyTo int64, text string, rows [][]button) int64 {
	payload := map[string]any{"chat_id": chat, "text": channel.CutUTF16(text, textMax), "disable_web_page_preview": true}
	if replyTo != 0 {
		payload["reply_parameters"] = map[string]any{"message_id": replyTo, "allow_sending_without_reply": true}
	}
	if len(rows) > 0 {
		payload["reply_markup"] = keyboardRows(rows...)
	}
	id, _ := t.sendMessage(ctx, payload)
	return id
}
