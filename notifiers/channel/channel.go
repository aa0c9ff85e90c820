// Package channel is what every notification service shares: the rendered
// Message a service sends, the Sender and Settings a service implements, the
// Service value its folder exports, and the plumbing most of them need
// (HTTP calls with redacted errors, length limits, fix hints, validation
// helpers). Service folders (notifiers/email, notifiers/ntfy, ...) import
// only this package, config and answer; package notifiers imports them.
package channel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/answer"
)

// Sender delivers one rendered notification to one service. An error names
// what went wrong without any secret in it; the outbox retries on any error.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Prober is implemented by senders whose service can be asked whether it
// would take a message without sending one (SMTP: connect, TLS, log in,
// NOOP, QUIT). While a channel fails, the outbox runs the check on the
// channel's backoff and tries a queued notification only once it passes;
// a channel without it probes with the queued notification itself.
type Prober interface {
	Probe(ctx context.Context) error
}

// Answering is implemented by senders whose pages can be answered from the
// channel's own app (Telegram's buttons). EnableAnswers makes the pages of
// the channel named name carry the answers key signs, and reports false
// when the channel's config lets nobody answer; Answers then reads the
// answers until ctx ends, carrying each out with do.
type Answering interface {
	EnableAnswers(key answer.Key, name string) bool
	Answers(ctx context.Context, do answer.Func, log *slog.Logger) error
}

// SharedAnswers is implemented by Answering senders that read the answers
// from an account every server of a fleet would read alike (a Telegram
// bot's getUpdates, a Matrix login's /sync of a room, a Signal number's
// receive): two readers of one account refuse (Telegram's 409), split or
// double each other's answers, so the outbox runs one reader per account
// in the fleet at a time, under a lease named after AnswerAccount. It is
// AccountDigest of what names the account, never a secret itself: it
// becomes a key on the bus. (Pushover's receipts belong to the server that
// sent the page, so it reads them itself.)
type SharedAnswers interface {
	AnswerAccount() string
}

// AccountDigest names an account by parts that may be secret (a token):
// the first 16 bytes of their SHA-256, in hex. The same parts give the
// same name on every server.
func AccountDigest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		// Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
		_, _ = fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Diagnoser is implemented by senders that know their service: Fix asks it
// before falling back to hints that fit any service.
type Diagnoser interface {
	// Hint names the cure for err particular to this service, or "".
	Hint(err error) string
	// AddressKey names the settings that say where the service is, for
	// hints about names that do not resolve or servers that do not answer:
	// "url", "webhook_url", "smtp.host/smtp.port (mail.example.net:587)".
	AddressKey() string
}

// Settings are a channel's own keys as its type decodes them from the
// config (config.ChannelSettings), and what builds its sender.
type Settings interface {
	config.ChannelSettings
	// NewSender builds the channel's sender. It must not touch the network:
	// a service that is down must not keep zwatch from starting.
	NewSender(env Env) (Sender, error)
}

// Env is what a sender gets from zwatch rather than from its settings.
type Env struct {
	// HTTP is the channel's own client, with notify.send_timeout as its
	// timeout: no state is shared between channels.
	HTTP *http.Client
	// Timeout is notify.send_timeout, for senders that dial themselves.
	Timeout time.Duration
}

// Service is one channel type: the value its folder exports as Service and
// notifiers.Services lists. It is the config.ChannelURLType the catalogue
// hands to config.
type Service struct {
	name    string
	keys    []string
	decode  func(n *yaml.Node, path string, errs *config.Errors) config.ChannelSettings
	schemes []string
	fromURL func(u config.Secret, path string, errs *config.Errors) (config.ChannelSettings, string)
}

var _ config.ChannelURLType = Service{}

// Define makes the Service for channel type name whose settings are S, a
// struct whose yaml tags, in field order, are the type's keys. When S has a
// URLForm method, the type may also be written as one URL.
func Define[S Settings](name string) Service {
	svc := Service{
		name: name,
		keys: yamlKeys(reflect.TypeFor[S]()),
		decode: func(n *yaml.Node, path string, errs *config.Errors) config.ChannelSettings {
			var s S
			if !config.DecodeChannelSettings(n, path, &s, errs) {
				return nil
			}
			return s
		},
	}
	var zero S
	if f, ok := any(zero).(interface{ URLForm() URLForm[S] }); ok {
		form := f.URLForm()
		svc.schemes = slices.Clone(form.Schemes)
		svc.fromURL = func(u config.Secret, path string, errs *config.Errors) (config.ChannelSettings, string) {
			return decodeURL(form, u, path, errs)
		}
	}
	return svc
}

// Name is the value of the type key.
func (s Service) Name() string { return s.name }

// Keys are the type's own keys, in the order of its settings' fields.
func (s Service) Keys() []string { return slices.Clone(s.keys) }

// Decode decodes the type's own keys into its settings (see config.ChannelType).
func (s Service) Decode(n *yaml.Node, path string, errs *config.Errors) config.ChannelSettings {
	return s.decode(n, path, errs)
}

// Schemes are the URL schemes that name the type; none without a URL form.
func (s Service) Schemes() []string { return slices.Clone(s.schemes) }

// DecodeURL decodes a channel URL into the type's settings (see
// config.ChannelURLType).
func (s Service) DecodeURL(u config.Secret, path string, errs *config.Errors) (config.ChannelSettings, string) {
	if s.fromURL == nil {
		errs.Add(path, nil, "type %s cannot be written as a URL: write it with type: %s and its keys", s.name, s.name)
		return nil, ""
	}
	return s.fromURL(u, path, errs)
}

func yamlKeys(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		keys = append(keys, name)
	}
	return keys
}
