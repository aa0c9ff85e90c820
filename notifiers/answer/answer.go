// Package answer is what a channel needs to carry a person's answer back
// from a page (a button tapped on the phone): the signed data a button
// holds, and the function that carries the answer out. The channels know
// nothing of the rule engine; the daemon hands them Func.
package answer

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The verbs a button may carry. Replace asks about replacing the disk of
// an incident; Confirm and Cancel answer that question, and their Action's
// Incident is then the question's ID (an offer, tools/replace/remote).
const (
	Ack     = "ack"
	Snooze  = "snooze"
	Replace = "replace"
	Confirm = "confirm"
	Cancel  = "cancel"
)

// SnoozeFor is how long a snooze button snoozes.
const SnoozeFor = 24 * time.Hour

// Action is what a tap asks for: a verb on one incident.
type Action struct {
	Verb     string
	Incident string
}

// Outcome is what an answer did, for the reply to the person.
type Outcome struct {
	Host   string
	Alerts int
	// Until ends a snooze.
	Until time.Time
	// Text is what to tell the person when the verb's own words do not
	// do (a replacement: why it is not offered, what it will run).
	Text string
	// Ask, when set, is a question to put to the person before anything
	// is done: its choices are buttons (a replacement's confirmation).
	Ask []Option
	// Progress, when set, carries what a started action reports until it
	// ends (a resilver); the channel shows each line in place of the last.
	// It is closed at the end.
	Progress <-chan string
}

// Option is one answer to a question: the button's text and its action.
type Option struct {
	Label  string
	Action Action
	// Word, when set, is what a person types to confirm where a tap is
	// not specific enough (the status page): the new disk's serial.
	Word string
}

// ErrGone: the incident no longer fires (resolved, or never was); the
// reply says so without saying more.
var ErrGone = errors.New("the incident is over")

// ErrClosed: a question (a replacement's) was answered, cancelled or
// timed out, or never asked; the reply says so without saying which.
var ErrClosed = errors.New("this question is no longer open: tap Replace on the page again")

// Func carries out act for by (the person, as the channel names them)
// through source (the channel's type and name: "telegram:phone").
type Func func(ctx context.Context, act Action, by, source string) (Outcome, error)

// Key signs the data buttons carry: a tap is obeyed only with data zwatch
// made itself (a client can send any data with a callback), and only from
// the people a channel lists.
type Key []byte

// KeyFile is the key's file in the state directory (root only, 0600).
const KeyFile = "answer.key"

// LoadKey reads the key of this install from dir, making it the first time.
func LoadKey(dir string) (Key, error) {
	p := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(p)
	if err == nil && len(b) == 32 {
		return Key(b), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read the answer key %s: %w", p, err)
	}
	if err == nil {
		return nil, fmt.Errorf("the answer key %s is %d bytes, not 32: remove it and restart zwatch to make a new one (buttons on older pages stop working)", p, len(b))
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, k, 0o600); err != nil {
		return nil, fmt.Errorf("write the answer key: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return nil, fmt.Errorf("write the answer key: %w", err)
	}
	return Key(k), nil
}

// dataPrefix and macLen shape a button's data: "zw1 VERB INCIDENT MAC",
// within Telegram's 64 bytes.
const (
	dataPrefix = "zw1"
	macLen     = 16 // base64url characters: 96 bits
)

// Sign is the data of a button asking for act.
func (k Key) Sign(act Action) string {
	body := dataPrefix + " " + act.Verb + " " + act.Incident
	return body + " " + k.mac(body)
}

func (k Key) mac(body string) string {
	h := hmac.New(sha256.New, k)
	h.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))[:macLen]
}

// Verify reads data a button carried; any other data is an error that does
// not say why (a forged tap learns nothing).
func (k Key) Verify(data string) (Action, error) {
	bad := errors.New("not data of a zwatch button")
	if len(data) > 64 || len(k) == 0 {
		return Action{}, bad
	}
	f := strings.Split(data, " ")
	if len(f) != 4 || f[0] != dataPrefix || !buttonVerb(f[1]) || !validIncident(f[2]) {
		return Action{}, bad
	}
	if !hmac.Equal([]byte(f[3]), []byte(k.mac(strings.Join(f[:3], " ")))) {
		return Action{}, bad
	}
	return Action{Verb: f[1], Incident: f[2]}, nil
}

func buttonVerb(v string) bool {
	switch v {
	case Ack, Snooze, Replace, Confirm, Cancel:
		return true
	}
	return false
}

func validIncident(id string) bool {
	return len(id) == 8 && strings.Trim(id, "0123456789abcdef") == ""
}
