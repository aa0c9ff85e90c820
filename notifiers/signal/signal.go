// Package signal is the Signal channel. zwatch talks to the signal-cli REST
// API (github.com/bbernhard/signal-cli-rest-api), which runs signal-cli for
// a Signal account registered or linked there, and posts to its /v2/send.
// Signal has no official bot API, and running signal-cli itself would tie
// zwatch to a Java runtime and to the account's key store. notify has no
// Signal service.
package signal

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the signal channel type.
var Service = channel.Define[Config]("signal")

// textMax is in UTF-8 bytes. signal-cli sends the first 2,000 bytes of a
// longer text as the message body and the whole text as a "long text"
// attachment (text/x-signal-plain; MAX_MESSAGE_SIZE_BYTES in signal-cli),
// which the Signal apps show behind "Read more" and download by themselves
// only up to 64 KiB (MAX_TOTAL_BODY_SIZE_BYTES in Signal-Android). So the
// text is cut at 64 KiB: the summary line leads the inline part and the
// notification preview, and the replacement guide further down arrives
// whole.
const textMax = 64 << 10

// Text modes of /v2/send.
const (
	modeNormal = "normal"
	modeStyled = "styled"
)

const groupPrefix = "group."

// Config is a signal channel's own keys.
type Config struct {
	// URL is the signal-cli REST API, e.g. http://127.0.0.1:8080.
	URL string `yaml:"url"`
	// Number is the sending account, in E.164 (+4915112345678).
	Number string `yaml:"number"`
	// Recipients are E.164 numbers and group ids (group.…).
	Recipients []string `yaml:"recipients"`
	// TextMode is normal (the default: the text as it is) or styled (the
	// summary line in bold).
	TextMode string `yaml:"text_mode"`
	// AnswerNumbers are the numbers (E.164) whose replies "ack" or
	// "snooze" answer a page (answers.go); none: pages carry no answer.
	AnswerNumbers []string `yaml:"answer_numbers"`
}

var _ channel.Settings = Config{}

// e164 is a + then the country code (no leading 0) and at most 15 digits.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.RequiredURL(errs, p+".url", c.URL, "the signal-cli REST API, e.g. http://127.0.0.1:8080")
	if u, err := url.Parse(c.URL); err == nil && u.User != nil {
		// It would be a secret in a plain string, printed by check-config.
		errs.Add(p+".url", nil, "holds a user name or password: the REST API has no login; reach it on loopback or a private network, without credentials in the URL")
	}
	if strings.TrimSpace(c.Number) == "" {
		errs.Add(p+".number", nil, "empty: set the Signal account that sends, registered or linked in the REST API, in E.164 form (+4915112345678)")
	} else if problem := phoneProblem(c.Number); problem != "" {
		errs.Add(p+".number", c.Number, "%s", problem)
	}
	if len(c.Recipients) == 0 {
		errs.Add(p+".recipients", nil, "empty: add at least one phone number (E.164, +4915112345678) or group id (group.…)")
	}
	seen := map[string]bool{}
	for i, r := range c.Recipients {
		path := fmt.Sprintf("%s.recipients[%d]", p, i)
		switch {
		case seen[r]:
			errs.Add(path, r, "listed twice: each recipient gets one message")
		case strings.HasPrefix(r, groupPrefix):
			if !validGroupID(r) {
				errs.Add(path, r, "not a Signal group id: copy the id (group.…) from GET /v1/groups/%s of the REST API", c.Number)
			}
		default:
			if problem := phoneProblem(r); problem != "" {
				errs.Add(path, r, "%s, or a group id (group.…)", problem)
			}
		}
		seen[r] = true
	}
	if c.TextMode != "" {
		channel.OneOf(errs, p+".text_mode", c.TextMode, modeNormal, modeStyled)
	}
	for i, n := range c.AnswerNumbers {
		if problem := phoneProblem(n); problem != "" {
			errs.Add(fmt.Sprintf("%s.answer_numbers[%d]", p, i), n, "%s", problem)
		}
	}
}

// phoneProblem says what keeps s from being an E.164 number and how to
// write it, or "" when it is one.
func phoneProblem(s string) string {
	if e164.MatchString(s) {
		return ""
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == '+' {
			return r
		}
		if strings.ContainsRune(" -./()", r) {
			return -1
		}
		return 'x'
	}, s)
	switch {
	case strings.HasPrefix(digits, "00") && e164.MatchString("+"+digits[2:]):
		return fmt.Sprintf("not in E.164 form: write the leading 00 as +: %s", "+"+digits[2:])
	case digits != s && e164.MatchString(digits):
		return fmt.Sprintf("not in E.164 form: write it without spaces, dashes or brackets: %s", digits)
	case strings.HasPrefix(digits, "0"):
		return "a national number: write it in E.164 form, + and the country code without the leading 0 (+4915112345678)"
	}
	return "not an E.164 phone number: + and the country code, then at most 15 digits in all (+4915112345678)"
}

// validGroupID accepts what the REST API accepts as a group: "group." and
// the base64 of signal-cli's base64 of a 32-byte group id.
func validGroupID(s string) bool {
	inner, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, groupPrefix))
	if err != nil {
		return false
	}
	id, err := base64.StdEncoding.DecodeString(string(inner))
	return err == nil && len(id) == 32
}

// HasLiteralSecret is false: the REST API takes no token.
func (c Config) HasLiteralSecret() bool { return false }

// NewSender builds the channel's sender.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts each notification to the numbers in one request and to
// each group in one of its own: the REST API refuses groups mixed with
// numbers, and more than one group, in one request.
type Sender struct {
	send, number, mode string
	batches            [][]string
	client             *http.Client
	// sent remembers which batches already got a notification whose send
	// to another batch failed, so a retry does not repeat it to them.
	mu   sync.Mutex
	sent map[string]map[int]bool
	// base, answerers, name, pages and poll: answers by reply
	// (answers.go); poll is shorter in tests.
	base      string
	answerers map[string]bool
	name      string
	pages     pageLog
	poll      time.Duration
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	s := &Sender{
		send: strings.TrimRight(c.URL, "/") + "/v2/send", number: c.Number, mode: c.TextMode,
		client: env.HTTP, sent: map[string]map[int]bool{}, base: strings.TrimRight(c.URL, "/"),
	}
	if len(c.AnswerNumbers) > 0 {
		s.answerers = map[string]bool{}
		for _, n := range c.AnswerNumbers {
			s.answerers[n] = true
		}
	}
	if s.mode == "" {
		s.mode = modeNormal
	}
	var numbers []string
	for _, r := range c.Recipients {
		if strings.HasPrefix(r, groupPrefix) {
			s.batches = append(s.batches, []string{r})
		} else {
			numbers = append(numbers, r)
		}
	}
	if len(numbers) > 0 {
		s.batches = append([][]string{numbers}, s.batches...)
	}
	return s
}

// Send posts m to every batch of recipients that has not had it yet.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	incident := s.answerable(m)
	text := Text(withHint(m, incident), s.mode)
	for i, to := range s.batches {
		if m.ID != "" && s.already(m.ID, i) {
			continue
		}
		// text_mode goes out even when normal: a REST API started with
		// DEFAULT_SIGNAL_TEXT_MODE=styled would otherwise eat the * and ~
		// of device paths and globs.
		payload := map[string]any{"message": text, "number": s.number, "recipients": to, "text_mode": s.mode}
		err := channel.Do(ctx, s.client, channel.Request{
			Service: "signal", URL: s.send, ContentType: "application/json", Payload: payload,
			Check: func(raw []byte) error {
				if incident != "" {
					s.pages.note(raw, incident)
				}
				return nil
			},
		})
		if err != nil {
			return err
		}
		if m.ID != "" && len(s.batches) > 1 {
			s.mark(m.ID, i)
		}
	}
	s.forget(m.ID)
	return nil
}

// Text is what Signal shows for m: the rendered text cut to textMax; in
// styled mode the summary line is bold and every other character that the
// REST API reads as styling is escaped.
func Text(m channel.Message, mode string) string {
	text := channel.CutBytes(m.Text, textMax)
	if mode != modeStyled {
		return text
	}
	first, rest, more := strings.Cut(text, "\n")
	if strings.HasSuffix(first, `\`) {
		// A backslash before the closing ** would escape it.
		first += " "
	}
	out := "**" + escapeStyling(first) + "**"
	if more {
		out += "\n" + escapeStyling(rest)
	}
	return out
}

// escapeStyling puts a backslash before each *, ~, ` and |, the characters
// the REST API's text style parser turns into bold, italic, strikethrough,
// monospace and spoilers.
func escapeStyling(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("*~`|", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *Sender) already(id string, batch int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[id][batch]
}

func (s *Sender) mark(id string, batch int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent[id] == nil {
		s.sent[id] = map[int]bool{}
	}
	s.sent[id][batch] = true
}

func (s *Sender) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sent, id)
}

// Hint reads the REST API's refusals, which carry signal-cli's words in
// {"error": "..."}.
func (s *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		if channel.TimedOut(err) {
			return "no answer in time: in MODE=normal the REST API starts signal-cli (Java) for every message, which a small NAS may not finish within notify.send_timeout: run the REST API with MODE=json-rpc, or raise notify.send_timeout"
		}
		return ""
	}
	d := strings.ToLower(se.Detail)
	switch {
	case se.Status == http.StatusTooManyRequests || strings.Contains(d, "rate limit") || strings.Contains(d, "proof required"):
		return fmt.Sprintf("Signal rate-limits the account %s: solve the captcha challenge (POST /v1/accounts/%s/rate-limit-challenge with the challenge token from the error); the outbox retries meanwhile", s.number, s.number)
	case strings.Contains(d, "untrusted identit"):
		return fmt.Sprintf("a recipient's safety number changed (Signal reinstalled or a new phone): trust the new one with PUT /v1/identities/%s/trust/<recipient> ({\"trust_all_known_keys\": true}), or run the REST API with JSON_RPC_TRUST_NEW_IDENTITIES=always", s.number)
	case strings.Contains(d, "unregistered user"):
		return "a recipient has no Signal account: check recipients (E.164, with the country code)"
	case strings.Contains(d, "not registered"):
		return fmt.Sprintf("the REST API has no Signal account %s: register it there, or link it (GET /v1/qrcodelink?device_name=zwatch, then Signal → Settings → Linked devices), and check number", s.number)
	case strings.Contains(d, "update your profile"):
		return fmt.Sprintf("set a profile name for %s first (PUT /v1/profiles/%s): Signal groups need one", s.number, s.number)
	case strings.Contains(d, "invalid group"), strings.Contains(d, "group not found"), strings.Contains(d, "not a member"),
		strings.Contains(d, "invalid signal group"), strings.Contains(d, "invalid identifier"):
		return fmt.Sprintf("the account does not know this group: copy its id (group.…) from GET /v1/groups/%s and make sure the account is a member", s.number)
	case se.Status == http.StatusNotFound:
		return "no /v2/send at url: set url to the REST API's base address (http://host:8080, no path), and update the container if it predates /v2/send"
	}
	return ""
}

// AddressKey is url.
func (s *Sender) AddressKey() string { return "url" }
