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

// Message kinds: the subject suffix under zwatch.v1.<host>. and the schema name.
const (
	KindZpoolStatus    = "zpool.status"
	KindZpoolCapacity  = "zpool.capacity"
	KindZpoolEvent     = "zpool.event"
	KindSmart          = "smart" // subject adds .<serial>
	KindARC            = "arc"
	KindCollectorError = "collector.error"
	KindMaintenance    = "maintenance"
	KindHeartbeat      = "heartbeat"
	KindAlert          = "alert"
)

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

// Wrap builds an envelope around data.
func Wrap(kind, host, collector string, at time.Time, data any) ([]byte, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("encode %s data: %w", kind, err)
	}
	return json.Marshal(Envelope{Schema: Schema(kind), Host: host, Collector: collector, CollectedAt: at.UTC(), Data: raw})
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

// KindOf returns the message kind of a zwatch subject (the part after the
// host), e.g. "smart" for zwatch.v1.nas1.smart.WD-123, and the host token.
func KindOf(subject string) (host, kind string, ok bool) {
	parts := strings.SplitN(subject, ".", 4)
	if len(parts) < 4 || parts[0] != "zwatch" || parts[1] != Version {
		return "", "", false
	}
	rest := parts[3]
	if strings.HasPrefix(rest, KindSmart+".") {
		return parts[2], KindSmart, true
	}
	return parts[2], rest, true
}

// Stream names and their subjects. Facts and alerts live in separate streams
// so that their subjects never overlap and their retention can differ.
const (
	StreamFacts  = "ZWATCH_FACTS"
	StreamAlerts = "ZWATCH_ALERTS"
	// StateBucket is the key-value bucket holding the rule engine's state.
	StateBucket = "zwatch_state"
)

// FactSubjects are the subjects of the facts stream, for every host.
var FactSubjects = []string{
	"zwatch." + Version + ".*.zpool.>",
	"zwatch." + Version + ".*.smart.>",
	"zwatch." + Version + ".*." + KindARC,
	"zwatch." + Version + ".*.collector.>",
	"zwatch." + Version + ".*." + KindMaintenance,
	"zwatch." + Version + ".*." + KindHeartbeat,
}

// AlertSubjects is the subject of the alerts stream (the durable outbox).
var AlertSubjects = []string{"zwatch." + Version + ".*." + KindAlert}
