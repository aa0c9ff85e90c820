package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Answers from Matrix: a page of a channel with answer_users carries the
// signed answers (Content.Answer) and a line saying how to answer; a loop
// long-polls /sync (outbound only) for reactions (✅ acknowledge, 💤 snooze)
// and replies ("ack", "snooze") in the room. An answer counts only from a
// listed user and only about an event the bot itself sent that carries a
// signed answer: the page is read back from the homeserver, so a forged
// event or another user's message never acts. The reply in the room says
// what was done. Reactions made while zwatch was stopped are not seen: a
// restart starts from the room's present.

const (
	// syncTimeout is /sync's long-poll.
	syncTimeout = 30 * time.Second
	// maxSyncBytes bounds one /sync answer (the filter keeps it small).
	maxSyncBytes = 1 << 20
)

var _ channel.Answering = (*Sender)(nil)

// EnableAnswers makes pages carry answers, when answer_users lets someone
// answer.
func (s *Sender) EnableAnswers(key answer.Key, name string) bool {
	if len(s.answerers) == 0 || len(key) == 0 {
		return false
	}
	s.key, s.name = key, name
	return true
}

var _ channel.SharedAnswers = (*Sender)(nil)

// AnswerAccount names the login and the room: /sync lets two readers of
// one login run, but each would answer every reaction, while another
// channel's room on the same login needs its own reader.
func (s *Sender) AnswerAccount() string { return channel.AccountDigest(s.token, s.room) }

// answerHint is the line under a page's summary that says how to answer.
const answerHint = "React with ✅ to acknowledge or 💤 to snooze for 24 h (or reply ack / snooze)."

// answerable adds the signed answers and the hint to a firing page's
// content.
func (s *Sender) answerable(m channel.Message, c Content) Content {
	if s.key == nil || m.Resolved || m.Test {
		return c
	}
	id := m.Incident()
	if id == "" {
		return c
	}
	c.Answer = map[string]string{
		answer.Ack:    s.key.Sign(answer.Action{Verb: answer.Ack, Incident: id}),
		answer.Snooze: s.key.Sign(answer.Action{Verb: answer.Snooze, Incident: id}),
	}
	first, rest, _ := strings.Cut(c.Body, "\n")
	c.Body = first + "\n" + answerHint + "\n" + rest
	hfirst, hrest, _ := strings.Cut(c.FormattedBody, "<br>")
	c.FormattedBody = hfirst + "<br><em>" + html.EscapeString(answerHint) + "</em><br>" + hrest
	return c
}

// event is the part of a ClientEvent the loop reads
// (https://spec.matrix.org/v1.11/client-server-api/#room-event-format).
type event struct {
	Type    string          `json:"type"`
	EventID string          `json:"event_id"`
	Sender  string          `json:"sender"`
	Content json.RawMessage `json:"content"`
}

// relatesTo is m.relates_to: a reaction's annotation, a reply's in_reply_to.
type relatesTo struct {
	RelType   string `json:"rel_type"`
	EventID   string `json:"event_id"`
	Key       string `json:"key"`
	InReplyTo *struct {
		EventID string `json:"event_id"`
	} `json:"m.in_reply_to"`
}

type answerContent struct {
	Body      string     `json:"body"`
	RelatesTo *relatesTo `json:"m.relates_to"`
}

// Answers long-polls /sync until ctx ends.
func (s *Sender) Answers(ctx context.Context, do answer.Func, log *slog.Logger) error {
	if s.key == nil {
		return nil
	}
	poll := s.poll
	if poll <= 0 {
		poll = syncTimeout
	}
	client := &http.Client{Timeout: poll + 20*time.Second}
	if s.client != nil && s.client.Transport != nil {
		client.Transport = s.client.Transport
	}
	var self, roomID, since string
	failures := 0
	for ctx.Err() == nil {
		var err error
		if self == "" {
			self, err = s.whoami(ctx)
		}
		if err == nil && roomID == "" {
			roomID, err = s.resolve(ctx)
		}
		var events []event
		if err == nil {
			// The first sync only finds where the room is now: what was
			// said before zwatch started is not an answer to act on.
			timeout := poll
			if since == "" {
				timeout = 0
			}
			var next string
			events, next, err = s.sync(ctx, client, roomID, since, timeout)
			if err == nil {
				if since == "" {
					events = nil
				}
				since = next
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			failures++
			wait := answer.RetryWait(failures)
			if failures == 1 || failures%10 == 0 {
				log.Warn("matrix answers: /sync failed; answers wait at the homeserver", "channel", s.name, "err", err, "retry_in", wait, "failures", failures)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			continue
		}
		failures = 0
		for _, e := range events {
			s.handle(ctx, roomID, self, e, do, log)
		}
	}
	return nil
}

// sync asks for the room's new reactions and messages after since.
func (s *Sender) sync(ctx context.Context, client *http.Client, roomID, since string, timeout time.Duration) ([]event, string, error) {
	filter, _ := json.Marshal(map[string]any{
		"presence":     map[string]any{"types": []string{}},
		"account_data": map[string]any{"types": []string{}},
		"room": map[string]any{
			"rooms":        []string{roomID},
			"timeline":     map[string]any{"types": []string{"m.reaction", "m.room.message"}, "limit": 50},
			"state":        map[string]any{"types": []string{}},
			"ephemeral":    map[string]any{"types": []string{}},
			"account_data": map[string]any{"types": []string{}},
		},
	})
	q := url.Values{"timeout": {fmt.Sprint(timeout.Milliseconds())}, "filter": {string(filter)}}
	if since != "" {
		q.Set("since", since)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/_matrix/client/v3/sync?"+q.Encode(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header = s.auth()
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", channel.Redact(fmt.Errorf("matrix /sync: %w", err), s.token)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxSyncBytes+1))
	if err != nil {
		return nil, "", channel.Redact(fmt.Errorf("matrix /sync: %w", err), s.token)
	}
	if len(raw) > maxSyncBytes {
		return nil, "", fmt.Errorf("matrix /sync: answer over %d bytes", maxSyncBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("matrix /sync: HTTP %d: %s", resp.StatusCode, channel.Detail(raw))
	}
	var r struct {
		NextBatch string `json:"next_batch"`
		Rooms     struct {
			Join map[string]struct {
				Timeline struct {
					Events []event `json:"events"`
				} `json:"timeline"`
			} `json:"join"`
		} `json:"rooms"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.NextBatch == "" {
		return nil, "", fmt.Errorf("matrix /sync: not the client-server API's answer: %.120q", raw)
	}
	return r.Rooms.Join[roomID].Timeline.Events, r.NextBatch, nil
}

// whoami is the bot's own user ID.
func (s *Sender) whoami(ctx context.Context) (string, error) {
	var r struct {
		UserID string `json:"user_id"`
	}
	err := channel.Do(ctx, s.client, channel.Request{
		Service: "matrix", Method: http.MethodGet, URL: s.base + "/_matrix/client/v3/account/whoami",
		Header: s.auth(), Secrets: []string{s.token},
		Check: func(raw []byte) error {
			if json.Unmarshal(raw, &r) != nil || !strings.HasPrefix(r.UserID, "@") {
				return &channel.ServiceError{Service: "matrix", Status: http.StatusOK, Detail: "no user_id: " + channel.Detail(raw)}
			}
			return nil
		},
	})
	return r.UserID, err
}

// verbOf reads what a reaction or reply asks, and which event it is about.
func verbOf(e event) (verb, about string) {
	var c answerContent
	if json.Unmarshal(e.Content, &c) != nil || c.RelatesTo == nil {
		return "", ""
	}
	switch e.Type {
	case "m.reaction":
		if c.RelatesTo.RelType != "m.annotation" {
			return "", ""
		}
		if verb := answer.VerbOfReaction(c.RelatesTo.Key); verb != "" {
			return verb, c.RelatesTo.EventID
		}
	case "m.room.message":
		if c.RelatesTo.InReplyTo == nil {
			return "", ""
		}
		verb, rest := answer.VerbOfWord(stripFallback(c.Body))
		if verb != "" && (rest == "" || verb == answer.Snooze && rest == "24h") {
			return verb, c.RelatesTo.InReplyTo.EventID
		}
	}
	return "", ""
}

// stripFallback drops the quoted lines ("> …") older clients put before
// a reply's own text.
func stripFallback(body string) string {
	var keep []string
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, ">") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// handle carries out one reaction or reply, if it is an answer.
func (s *Sender) handle(ctx context.Context, roomID, self string, e event, do answer.Func, log *slog.Logger) {
	verb, about := verbOf(e)
	if verb == "" || e.Sender == self {
		return
	}
	if !s.answerers[e.Sender] {
		log.Warn("matrix answers: an answer from a user not in answer_users was refused", "channel", s.name, "user", e.Sender)
		return
	}
	page, err := s.event(ctx, roomID, about)
	var act answer.Action
	if err == nil {
		var c Content
		err = errors.New("not a page of this zwatch")
		if page.Sender == self && json.Unmarshal(page.Content, &c) == nil && c.Answer[verb] != "" {
			act, err = s.key.Verify(c.Answer[verb])
		}
	}
	if err != nil {
		log.Warn("matrix answers: an answer about an event that is no page of this zwatch was refused", "channel", s.name, "user", e.Sender, "err", err)
		return
	}
	out, err := do(ctx, act, e.Sender, "matrix:"+s.name)
	var text string
	switch {
	case errors.Is(err, answer.ErrGone):
		text = "This incident is over."
	case err != nil:
		log.Error("matrix answers: the answer could not be recorded", "channel", s.name, "incident", act.Incident, "verb", act.Verb, "err", err)
		text = "zwatch could not record that; try again in a minute."
	case act.Verb == answer.Snooze:
		text = "💤 Incident " + act.Incident + " snoozed by " + e.Sender + " until " + out.Until.Local().Format("Mon 15:04")
	default:
		text = "✅ Incident " + act.Incident + " acknowledged by " + e.Sender + ": no repeats; a change for the worse pages again."
	}
	if err == nil {
		log.Info("matrix answers: incident answered", "channel", s.name, "incident", act.Incident, "verb", act.Verb, "by", e.Sender)
	}
	s.notice(ctx, roomID, e.EventID, text)
}

// event reads one event of the room back from the homeserver.
func (s *Sender) event(ctx context.Context, roomID, eventID string) (event, error) {
	var e event
	if eventID == "" {
		return e, errors.New("no event named")
	}
	err := channel.Do(ctx, s.client, channel.Request{
		Service: "matrix", Method: http.MethodGet,
		URL:    s.base + "/_matrix/client/v3/rooms/" + url.PathEscape(roomID) + "/event/" + url.PathEscape(eventID),
		Header: s.auth(), Secrets: []string{s.token},
		Check: func(raw []byte) error {
			if json.Unmarshal(raw, &e) != nil {
				return &channel.ServiceError{Service: "matrix", Status: http.StatusOK, Detail: channel.Detail(raw)}
			}
			return nil
		},
	})
	return e, err
}

// notice replies in the room, as a notice clients keep silent.
func (s *Sender) notice(ctx context.Context, roomID, inReplyTo, text string) {
	content := map[string]any{"msgtype": "m.notice", "body": text,
		"m.relates_to": map[string]any{"m.in_reply_to": map[string]string{"event_id": inReplyTo}}}
	_ = channel.Do(ctx, s.client, channel.Request{
		Service: "matrix", Method: http.MethodPut,
		URL:    s.base + "/_matrix/client/v3/rooms/" + url.PathEscape(roomID) + "/send/m.room.message/" + url.PathEscape(TxnID(roomID, "answer "+inReplyTo)),
		Header: s.auth(), ContentType: "application/json", Payload: content, Secrets: []string{s.token},
	})
}
