// Package matrix is the Matrix channel: a bot user posts an m.room.message
// event into one room through the client-server API, with its access token.
// The transaction ID comes from the notification ID, so a retry the
// homeserver already took is not posted twice.
package matrix

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the matrix channel type.
var Service = channel.Define[Config]("matrix")

// contentMax bounds the event content as encoded JSON. The whole event,
// signatures and all, must stay under 65536 bytes; the rest of it (room,
// sender, hashes, signatures, previous events) takes a few KiB.
const contentMax = 60000

// Config is a matrix channel's own keys.
type Config struct {
	// Homeserver is the client-server API base URL, e.g.
	// https://matrix-client.matrix.org.
	Homeserver string `yaml:"homeserver"`
	// AccessToken is the bot user's access token.
	AccessToken config.Secret `yaml:"access_token"`
	// Room is a room ID (!…) or an alias (#name:server), resolved when the
	// first message is sent.
	Room string `yaml:"room"`
	// AnswerUsers are the Matrix users (@name:server) who may answer a page
	// with a reaction or a reply (answers.go); none: pages carry no answer.
	AnswerUsers []string `yaml:"answer_users"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	channel.RequiredURL(errs, p+".homeserver", c.Homeserver, "the homeserver's client-server API URL, e.g. https://matrix.example.org")
	if i := strings.Index(c.Homeserver, "/_matrix"); i >= 0 {
		errs.Add(p+".homeserver", c.Homeserver, "set only the server's base URL (%s): zwatch adds the /_matrix/client/v3/... paths", c.Homeserver[:i])
	}
	channel.Need(errs, p+".access_token", c.AccessToken.IsSet(),
		"empty: set the bot user's access token (log in as the bot; Element: Settings → Help & About → Access token)")
	room := strings.TrimSpace(c.Room)
	switch {
	case room == "":
		errs.Add(p+".room", nil, "empty: set the room ID (!…, Element: Room settings → Advanced) or its alias in quotes, room: \"#name:server\" (unquoted, # starts a YAML comment)")
	case strings.HasPrefix(room, "!") && len(room) > 1:
	case strings.HasPrefix(room, "#"):
		if local, server, ok := strings.Cut(room[1:], ":"); !ok || local == "" || server == "" {
			errs.Add(p+".room", c.Room, "an alias needs its server: #name:server (e.g. #nas-alerts:matrix.org); or set the room ID (!…)")
		}
	case strings.HasPrefix(room, "@"):
		errs.Add(p+".room", c.Room, "is a user, not a room: create a room, invite that user and the bot, and set the room's ID (!…) or alias (#name:server)")
	default:
		errs.Add(p+".room", c.Room, "must be a room ID (!…, Element: Room settings → Advanced) or an alias (#name:server); in YAML quote it: \"#name:server\"")
	}
	for i, u := range c.AnswerUsers {
		if local, server, ok := strings.Cut(strings.TrimPrefix(u, "@"), ":"); !strings.HasPrefix(u, "@") || !ok || local == "" || server == "" {
			errs.Add(fmt.Sprintf("%s.answer_users[%d]", p, i), u, "want a Matrix user ID such as \"@alice:matrix.org\" (quoted: @ cannot start a plain YAML value)")
		}
	}
}

// HasLiteralSecret reports an access token written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.AccessToken.Literal }

// NewSender builds the channel's sender; an alias is resolved on first use.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// Sender posts one event per notification.
type Sender struct {
	base, token, room string
	client            *http.Client

	mu     sync.Mutex
	roomID string // room, or what its alias resolved to

	// answerers, key and name: who may answer, the key that signs what a
	// page carries, and the channel's name (answers.go).
	answerers map[string]bool
	key       answer.Key
	name      string
	poll      time.Duration // the /sync long-poll; shorter in tests
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	room := strings.TrimSpace(c.Room)
	s := &Sender{base: strings.TrimRight(c.Homeserver, "/"), token: c.AccessToken.Value, room: room, client: env.HTTP}
	if len(c.AnswerUsers) > 0 {
		s.answerers = map[string]bool{}
		for _, u := range c.AnswerUsers {
			s.answerers[u] = true
		}
	}
	if strings.HasPrefix(room, "!") {
		s.roomID = room
	}
	return s
}

// Send posts m as an m.room.message event.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	roomID, err := s.resolve(ctx)
	if err != nil {
		return err
	}
	content, err := channel.FitJSON(contentMax, m.Text, func(text string) Content { return s.answerable(m, NewContent(m, text)) })
	if err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	err = channel.Do(ctx, s.client, channel.Request{
		Service: "matrix", Method: http.MethodPut,
		URL:    s.base + "/_matrix/client/v3/rooms/" + url.PathEscape(roomID) + "/send/m.room.message/" + url.PathEscape(TxnID(roomID, m.ID)),
		Header: s.auth(), ContentType: "application/json", Payload: content, Secrets: []string{s.token},
		Check: func(raw []byte) error {
			// A URL that is not the client-server API (a web client's page)
			// may answer 200 too.
			var r struct {
				EventID string `json:"event_id"`
			}
			if json.Unmarshal(raw, &r) != nil || r.EventID == "" {
				return &channel.ServiceError{Service: "matrix", Status: http.StatusOK, Detail: "no event_id in the answer: " + channel.Detail(raw)}
			}
			return nil
		},
	})
	if se, ok := channel.AsServiceError(err); ok && (se.Status == 403 || se.Status == 404) && strings.HasPrefix(s.room, "#") {
		// The alias may point at another room by now: look it up again.
		s.mu.Lock()
		s.roomID = ""
		s.mu.Unlock()
	}
	return err
}

func (s *Sender) auth() http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+s.token)
	return h
}

// aliasError is a room alias that could not be resolved.
type aliasError struct {
	alias string
	err   error
}

func (e *aliasError) Error() string {
	return fmt.Sprintf("resolving room alias %s: %v", e.alias, e.err)
}
func (e *aliasError) Unwrap() error { return e.err }

// resolve returns the room ID, looking an alias up once.
func (s *Sender) resolve(ctx context.Context) (string, error) {
	s.mu.Lock()
	id := s.roomID
	s.mu.Unlock()
	if id != "" {
		return id, nil
	}
	var got struct {
		RoomID string `json:"room_id"`
	}
	err := channel.Do(ctx, s.client, channel.Request{
		Service: "matrix", Method: http.MethodGet,
		URL:    s.base + "/_matrix/client/v3/directory/room/" + url.PathEscape(s.room),
		Header: s.auth(), Secrets: []string{s.token},
		Check: func(raw []byte) error {
			if json.Unmarshal(raw, &got) != nil || !strings.HasPrefix(got.RoomID, "!") {
				return &channel.ServiceError{Service: "matrix", Status: http.StatusOK, Detail: "no room_id in the answer: " + channel.Detail(raw)}
			}
			return nil
		},
	})
	if err != nil {
		return "", &aliasError{alias: s.room, err: err}
	}
	s.mu.Lock()
	s.roomID = got.RoomID
	s.mu.Unlock()
	return got.RoomID, nil
}

// TxnID is the transaction ID of m's event in roomID: the same for every
// attempt, so the homeserver answers a retry with the event it already has.
func TxnID(roomID, notificationID string) string {
	sum := sha256.Sum256([]byte(roomID + "\x00" + notificationID))
	return "zwatch-" + hex.EncodeToString(sum[:16])
}

// Content is an m.room.message event's content.
type Content struct {
	MsgType       string `json:"msgtype"`
	Body          string `json:"body"`
	Format        string `json:"format"`
	FormattedBody string `json:"formatted_body"`
	// Answer holds, for a page that can be answered, the signed answers by
	// verb (answers.go): a reaction or reply names the page, and the page
	// what it may do.
	Answer map[string]string `json:"org.zwatch.answer,omitempty"`
}

// NewContent renders text (m.Text, perhaps cut) for m. Pages are m.text;
// resolved notices and information are m.notice, which clients' default
// push rules keep silent.
func NewContent(m channel.Message, text string) Content {
	c := Content{MsgType: "m.text", Body: text, Format: "org.matrix.custom.html"}
	if m.Silent() {
		c.MsgType = "m.notice"
	}
	first, rest, _ := strings.Cut(text, "\n")
	color := Color(m)
	var b strings.Builder
	fmt.Fprintf(&b, `<strong><font color="%s" data-mx-color="%s">%s</font></strong>`, color, color, html.EscapeString(first))
	for _, line := range strings.Split(rest, "\n") {
		b.WriteString("<br>")
		b.WriteString(html.EscapeString(line))
	}
	c.FormattedBody = b.String()
	return c
}

// Color marks the first line by severity: red, amber, blue, and green once
// resolved.
func Color(m channel.Message) string {
	switch {
	case m.Resolved:
		return "#2e7d32"
	case m.Severity == alert.Critical:
		return "#d00000"
	case m.Severity == alert.Warning:
		return "#e8a200"
	}
	return "#1565c0"
}

// Hint reads the homeserver's error codes.
func (s *Sender) Hint(err error) string {
	se, ok := channel.AsServiceError(err)
	if !ok {
		return ""
	}
	var ae *aliasError
	d := se.Detail
	switch {
	case se.Status == 401 || strings.Contains(d, "M_UNKNOWN_TOKEN") || strings.Contains(d, "M_MISSING_TOKEN"):
		return "the homeserver does not know this access token (M_UNKNOWN_TOKEN: the bot was logged out, or the token expired): log in as the bot again and set the new token in access_token"
	case errors.As(err, &ae) && (se.Status == 404 || strings.Contains(d, "M_NOT_FOUND")):
		return fmt.Sprintf("the homeserver knows no room alias %s: check it in the room's settings (Published addresses), or set room to the room ID (!…)", ae.alias)
	case se.Status == 403 || strings.Contains(d, "M_FORBIDDEN"):
		return "the bot may not post in this room (M_FORBIDDEN): invite the bot's user, have it accept the invite (join), and let its power level send messages"
	case se.Status == 404 || strings.Contains(d, "M_UNRECOGNIZED") || se.Status == 405:
		return "the homeserver URL does not serve the client-server API: set homeserver to the URL in https://<your server>/.well-known/matrix/client (m.homeserver base_url)"
	case se.Status == 413 || strings.Contains(d, "M_TOO_LARGE"):
		return "the homeserver refused the event as too large (M_TOO_LARGE); its limit may be lower than Matrix's 65536 bytes"
	case se.Status == 429 || strings.Contains(d, "M_LIMIT_EXCEEDED"):
		return "the homeserver rate-limits the bot (M_LIMIT_EXCEEDED): the outbox retries by itself; an admin can exempt the bot (Synapse: POST /_synapse/admin/v1/users/<bot>/override_ratelimit)"
	case se.Status == 200 && strings.Contains(d, "no event_id"):
		return "the answer was not the client-server API's: set homeserver to the URL in https://<your server>/.well-known/matrix/client"
	}
	return ""
}

// AddressKey is homeserver.
func (s *Sender) AddressKey() string { return "homeserver" }
