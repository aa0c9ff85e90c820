package signal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Answers from Signal: a page of a channel with answer_numbers says, under
// its summary, how to answer; the REST API's receive endpoint is polled
// (outbound only) and a message from a listed number that says "ack" or
// "snooze", as a reply to a page (quoting it), as a ✅/💤 reaction to it, or
// naming the incident ("ack 3f2a9c1e"), answers that incident. Signal
// authenticates the sender's number; anyone else's message is ignored. The
// sender gets a reply saying what was done. Polling receives the account's
// messages for zwatch alone: use an account no other program reads.

const (
	// receiveEvery is how often the receive endpoint is asked; receiveWait
	// is how long signal-cli waits for messages in one ask.
	receiveEvery   = 5 * time.Second
	receiveWait    = 10
	maxReceive     = 1 << 20
	maxPagesKept   = 256
	answerHintLine = "Reply ack or snooze to answer (or react ✅ / 💤)."
)

var _ channel.Answering = (*Sender)(nil)

// EnableAnswers makes pages say how to answer, when answer_numbers lets
// someone answer. The key is not needed: Signal authenticates the sender.
func (s *Sender) EnableAnswers(_ answer.Key, name string) bool {
	if len(s.answerers) == 0 {
		return false
	}
	s.name = name
	return true
}

var _ channel.SharedAnswers = (*Sender)(nil)

// AnswerAccount names the number, whichever REST API reads it: two readers
// of one REST API split its messages, two linked devices' both get them;
// one reader sees every answer once.
func (s *Sender) AnswerAccount() string { return channel.AccountDigest(s.number) }

// answerable is the incident a page answers for, "" when it carries none.
func (s *Sender) answerable(m channel.Message) string {
	if s.name == "" || m.Resolved || m.Test {
		return ""
	}
	return m.Incident()
}

// withHint puts the line that says how to answer under the summary.
func withHint(m channel.Message, incident string) channel.Message {
	if incident == "" {
		return m
	}
	first, rest, _ := strings.Cut(m.Text, "\n")
	m.Text = first + "\n" + answerHintLine + " Incident " + incident + ".\n" + rest
	return m
}

// pageLog remembers which incident each page sent is about, by the
// timestamp Signal knows it by (what a reply quotes and a reaction
// targets); a restart forgets it, and then the incident ID in the quoted
// text, or in the reply itself, names it.
type pageLog struct {
	mu    sync.Mutex
	byTS  map[int64]string
	order []int64
}

func (l *pageLog) note(raw []byte, incident string) {
	var r struct {
		Timestamp json.Number `json:"timestamp"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return
	}
	ts, err := r.Timestamp.Int64()
	if err != nil || ts <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byTS == nil {
		l.byTS = map[int64]string{}
	}
	if len(l.order) >= maxPagesKept {
		delete(l.byTS, l.order[0])
		l.order = l.order[1:]
	}
	l.byTS[ts] = incident
	l.order = append(l.order, ts)
}

func (l *pageLog) incident(ts int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byTS[ts]
}

// envelope is the part of what GET /v1/receive/<number> returns that the
// loop reads.
type envelope struct {
	Envelope struct {
		SourceNumber string `json:"sourceNumber"`
		Source       string `json:"source"`
		SourceName   string `json:"sourceName"`
		DataMessage  *struct {
			Message *string `json:"message"`
			Quote   *struct {
				ID   int64  `json:"id"`
				Text string `json:"text"`
			} `json:"quote"`
			Reaction *struct {
				Emoji               string `json:"emoji"`
				TargetSentTimestamp int64  `json:"targetSentTimestamp"`
				IsRemove            bool   `json:"isRemove"`
			} `json:"reaction"`
		} `json:"dataMessage"`
	} `json:"envelope"`
}

// Answers polls the receive endpoint until ctx ends.
func (s *Sender) Answers(ctx context.Context, do answer.Func, log *slog.Logger) error {
	if s.name == "" {
		return nil
	}
	every := s.poll
	if every <= 0 {
		every = receiveEvery
	}
	client := &http.Client{Timeout: (receiveWait + 20) * time.Second}
	if s.client != nil && s.client.Transport != nil {
		client.Transport = s.client.Transport
	}
	failures := 0
	for {
		envs, err := s.receive(ctx, client)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			failures++
			if failures == 1 || failures%10 == 0 {
				log.Warn("signal answers: receiving failed; replies wait in the REST API", "channel", s.name, "err", err, "failures", failures)
			}
		default:
			failures = 0
			for _, e := range envs {
				s.handle(ctx, e, do, log)
			}
		}
		wait := every
		if failures > 0 {
			wait = answer.RetryWait(failures)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// receive asks the REST API for the account's new messages.
func (s *Sender) receive(ctx context.Context, client *http.Client) ([]envelope, error) {
	u := s.base + "/v1/receive/" + url.PathEscape(s.number) + "?timeout=" + strconv.Itoa(receiveWait)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("signal receive: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReceive+1))
	if err != nil {
		return nil, fmt.Errorf("signal receive: %w", err)
	}
	if len(raw) > maxReceive {
		return nil, fmt.Errorf("signal receive: answer over %d bytes", maxReceive)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("signal receive: HTTP %d: %s (in json-rpc mode the REST API serves receive as a websocket only: run it in normal or native mode for answers)",
			resp.StatusCode, channel.Detail(raw))
	}
	var envs []envelope
	if err := json.Unmarshal(raw, &envs); err != nil {
		return nil, fmt.Errorf("signal receive: not the REST API's answer: %.120q", raw)
	}
	return envs, nil
}

var incidentInText = regexp.MustCompile(`(?i)\bincident ([0-9a-f]{8})\b`)
var incidentAfterVerb = regexp.MustCompile(`^(?:24h\s+)?([0-9a-f]{8})$`)

// answerIn reads an answer from one received message: its verb and incident.
func (s *Sender) answerIn(e envelope) (verb, incident string) {
	dm := e.Envelope.DataMessage
	if dm == nil {
		return "", ""
	}
	if r := dm.Reaction; r != nil {
		if r.IsRemove {
			return "", ""
		}
		if verb = answer.VerbOfReaction(r.Emoji); verb == "" {
			return "", ""
		}
		return verb, s.pages.incident(r.TargetSentTimestamp)
	}
	if dm.Message == nil {
		return "", ""
	}
	verb, rest := answer.VerbOfWord(*dm.Message)
	if verb == "" {
		return "", ""
	}
	if m := incidentAfterVerb.FindStringSubmatch(rest); m != nil {
		return verb, m[1]
	}
	if q := dm.Quote; q != nil {
		if id := s.pages.incident(q.ID); id != "" {
			return verb, id
		}
		if m := incidentInText.FindStringSubmatch(q.Text); m != nil {
			return verb, strings.ToLower(m[1])
		}
	}
	return verb, ""
}

// handle carries out one received message, if it is an answer.
func (s *Sender) handle(ctx context.Context, e envelope, do answer.Func, log *slog.Logger) {
	verb, incident := s.answerIn(e)
	if verb == "" {
		return
	}
	from := cmp.Or(e.Envelope.SourceNumber, e.Envelope.Source)
	if !s.answerers[from] {
		log.Warn("signal answers: an answer from a number not in answer_numbers was ignored", "channel", s.name, "from", from)
		return
	}
	if incident == "" {
		s.reply(ctx, from, "Which incident? Reply to the page itself, or write ack and its ID, as in: ack 3f2a9c1e")
		return
	}
	who := from
	if e.Envelope.SourceName != "" {
		who = e.Envelope.SourceName + " (" + from + ")"
	}
	out, err := do(ctx, answer.Action{Verb: verb, Incident: incident}, who, "signal:"+s.name)
	var text string
	switch {
	case errors.Is(err, answer.ErrGone):
		text = "Incident " + incident + " is over (or never was)."
	case err != nil:
		log.Error("signal answers: the answer could not be recorded", "channel", s.name, "incident", incident, "verb", verb, "err", err)
		text = "zwatch could not record that; try again in a minute."
	case verb == answer.Snooze:
		text = "💤 Incident " + incident + " snoozed until " + out.Until.Local().Format("Mon 15:04") + "."
	default:
		text = "✅ Incident " + incident + " acknowledged: no repeats; a change for the worse pages again."
	}
	if err == nil {
		log.Info("signal answers: incident answered", "channel", s.name, "incident", incident, "verb", verb, "by", who)
	}
	s.reply(ctx, from, text)
}

// reply sends text to one number.
func (s *Sender) reply(ctx context.Context, to, text string) {
	_ = channel.Do(ctx, s.client, channel.Request{
		Service: "signal", URL: s.send, ContentType: "application/json",
		Payload: map[string]any{"message": text, "number": s.number, "recipients": []string{to}, "text_mode": modeNormal},
	})
}
