// Package bus is zwatch's message bus: NATS subjects and the versioned JSON
// envelope every message travels in, an embedded NATS server with JetStream
// for one machine, and the connection to an external cluster for many.
package bus

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Version is the subject and schema version prefix.
const Version = "v1"

// KindAlert is the subject suffix of notifications, zwatch.v1.<host>.alert.
// The kinds of fact are listed in package facts.
const KindAlert = "alert"

// KindHistory is the subject token under which the server keeps each host's
// history, zwatch.v1.<host>.history.> (package history).
const KindHistory = "history"

// Schema names the data layout of an envelope, e.g. zwatch.v1.zpool.status.
func Schema(kind string) string { return "zwatch." + Version + "." + kind }

// SchemaNotification is the schema of messages on the alert subject.
var SchemaNotification = Schema("notification")

// Subject builds zwatch.v1.<host>.<kind>[.<extra>] with each token sanitised.
func Subject(host, kind string, extra ...string) string {
	var b strings.Builder
	b.WriteString("zwatch.")
	b.WriteString(Version)
	b.WriteByte('.')
	b.WriteString(Token(host))
	b.WriteByte('.')
	b.WriteString(kind)
	for _, e := range extra {
		b.WriteByte('.')
		b.WriteString(Token(e))
	}
	return b.String()
}

// Token turns any string (host name, disk serial) into one valid NATS subject
// token: no dots, spaces, wildcards or control characters; never empty.
// Characters outside [A-Za-z0-9_-] become '_'.
func Token(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Envelope wraps every message on the bus.
type Envelope struct {
	Schema      string          `json:"schema"`
	Host        string          `json:"host"`
	Collector   string          `json:"collector"`
	CollectedAt time.Time       `json:"collected_at"`
	Data        json.RawMessage `json:"data"`
}

// Wrap builds an envelope of schema Schema(kind) around data.
func Wrap(kind, host, collector string, at time.Time, data any) ([]byte, error) {
	return WrapSchema(Schema(kind), host, collector, at, data)
}

// WrapSchema builds an envelope of the given schema around data, for
// messages whose schema is not named after their subject (notifications).
func WrapSchema(schema, host, collector string, at time.Time, data any) ([]byte, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("encode %s data: %w", schema, err)
	}
	return json.Marshal(Envelope{Schema: schema, Host: host, Collector: collector, CollectedAt: at.UTC(), Data: raw})
}

// Decode decodes an envelope and checks its schema.
func Decode(msg []byte, wantKind string, into any) (Envelope, error) {
	var env Envelope
	if err := json.Unmarshal(msg, &env); err != nil {
		return env, fmt.Errorf("decode envelope: %w", err)
	}
	if want := Schema(wantKind); env.Schema != want {
		return env, fmt.Errorf("schema %q, want %q", env.Schema, want)
	}
	if into != nil {
		if err := json.Unmarshal(env.Data, into); err != nil {
			return env, fmt.Errorf("decode %s data: %w", env.Schema, err)
		}
	}
	return env, nil
}

// HostOf returns the host token of a zwatch subject,
// e.g. "nas1" for zwatch.v1.nas1.smart.WD-123 (and for its partitioned
// form zwatch.7.v1.nas1.smart.WD-123).
func HostOf(subject string) (host string, ok bool) {
	subject = Canonical(subject)
	parts := strings.SplitN(subject, ".", 4)
	if len(parts) < 4 || parts[0] != "zwatch" || parts[1] != Version {
		return "", false
	}
	return parts[2], true
}

// Stream names and their subjects. Facts and alerts live in separate streams
// so that their subjects never overlap and their retention can differ.
const (
	StreamFacts  = "ZWATCH_FACTS"
	StreamAlerts = "ZWATCH_ALERTS"
	// StateBucket is the key-value bucket holding the rule engine's state.
	StateBucket = "zwatch_state"
)

// AlertSubjects is the subject of the alerts stream (the durable outbox).
var AlertSubjects = []string{"zwatch." + Version + ".*." + KindAlert}
