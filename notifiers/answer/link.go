package answer

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Links to the status page answer a page from any channel (an email, a
// chat message): each carries a token bound to host, incident, verb and
// expiry, signed with the install's key, with a nonce that makes it work
// once. Opening the link (a GET, which a chat app's link preview makes
// too) only shows what it would do; the answer is the confirmation page's
// POST (views/web).

// LinkFor is how long a link in a notification works.
const LinkFor = 72 * time.Hour

// Link is what a link's token asks for.
type Link struct {
	Action
	Host    string
	Expires time.Time // to the second
	// Nonce makes the token single-use: the page records it when used.
	Nonce string
}

// linkPrefix versions the token format: "zw2.VERB.INCIDENT.HOST.EXPIRES.NONCE.MAC".
const (
	linkPrefix = "zw2"
	maxLink    = 512
	nonceBytes = 12
)

// NewLink is a link asking for act on host's incident, working until
// now+LinkFor, with a fresh nonce.
func NewLink(act Action, host string, now time.Time) (Link, error) {
	b := make([]byte, nonceBytes)
	if _, err := rand.Read(b); err != nil {
		return Link{}, err
	}
	return Link{Action: act, Host: host, Expires: now.Add(LinkFor).Truncate(time.Second).UTC(), Nonce: hex.EncodeToString(b)}, nil
}

// SignLink is the token of l.
func (k Key) SignLink(l Link) string {
	host := base64.RawURLEncoding.EncodeToString([]byte(l.Host)) // a host name may hold dots
	body := strings.Join([]string{linkPrefix, l.Verb, l.Incident, host, strconv.FormatInt(l.Expires.Unix(), 10), l.Nonce}, ".")
	return body + "." + k.mac(body)
}

// Errors of VerifyLink a page may tell its user: neither says anything of
// the incident.
var (
	ErrLinkExpired = errors.New("this link has expired: answer with zwatch ack on the box, or from a newer notification")
	ErrLinkBad     = errors.New("not a zwatch answer link (cut short when copied?)")
)

// VerifyLink reads a link's token: ErrLinkBad for anything zwatch did not
// sign, ErrLinkExpired for a token past its time. Whether it was used is
// the page's to check (its nonce).
func (k Key) VerifyLink(token string, now time.Time) (Link, error) {
	if len(token) > maxLink || len(k) == 0 {
		return Link{}, ErrLinkBad
	}
	f := strings.Split(token, ".")
	if len(f) != 7 || f[0] != linkPrefix || (f[1] != Ack && f[1] != Snooze && f[1] != Replace) || !validIncident(f[2]) || !validNonce(f[5]) {
		return Link{}, ErrLinkBad
	}
	host, err := base64.RawURLEncoding.DecodeString(f[3])
	if err != nil || len(host) == 0 || len(host) > 253 {
		return Link{}, ErrLinkBad
	}
	if !hmac.Equal([]byte(f[6]), []byte(k.mac(strings.Join(f[:6], ".")))) {
		return Link{}, ErrLinkBad
	}
	exp, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil || exp <= 0 {
		return Link{}, ErrLinkBad
	}
	l := Link{Action: Action{Verb: f[1], Incident: f[2]}, Host: string(host), Expires: time.Unix(exp, 0).UTC(), Nonce: f[5]}
	if !now.Before(l.Expires) {
		return l, ErrLinkExpired
	}
	return l, nil
}

// A link's verb is Ack, Snooze or Replace; Replace links only lead to a
// question (tools/replace/remote), which a second, typed confirmation
// answers.

// FormToken is the token the confirmation page's form carries beside a
// link's: only a page this server made for that link can post it, so
// another site cannot make a logged-in browser answer.
func (k Key) FormToken(linkToken string) string { return k.mac("form." + linkToken) }

// CheckFormToken reports whether form is FormToken(linkToken).
func (k Key) CheckFormToken(linkToken, form string) bool {
	return len(k) > 0 && hmac.Equal([]byte(form), []byte(k.FormToken(linkToken)))
}

func validNonce(n string) bool {
	return len(n) == 2*nonceBytes && strings.Trim(n, "0123456789abcdef") == ""
}
