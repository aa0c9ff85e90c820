// Package alert is zwatch's alert model, in the manner of Alertmanager:
// labels identify an alert (their fingerprint), alerts move from pending to
// firing to resolved, and notifications carry groups of them to people.
package alert

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/disk"
)

// Severity orders how urgently a person must act.
type Severity string

const (
	Info     Severity = "info"
	Warning  Severity = "warning"
	Critical Severity = "critical"
)

// Rank orders severities: info < warning < critical. Unknown is below info.
func (s Severity) Rank() int {
	switch s {
	case Info:
		return 1
	case Warning:
		return 2
	case Critical:
		return 3
	}
	return 0
}

// ParseSeverity accepts info, warning or critical.
func ParseSeverity(s string) (Severity, bool) {
	v := Severity(strings.ToLower(strings.TrimSpace(s)))
	return v, v.Rank() > 0
}

// State is where an alert is in its life.
type State string

const (
	Pending  State = "pending"
	Firing   State = "firing"
	Resolved State = "resolved"
)

// Alert is one condition about one thing (a pool, a vdev, a disk, a collector).
type Alert struct {
	Name        string            `json:"name"`
	Severity    Severity          `json:"severity"`
	State       State             `json:"state"`
	Labels      map[string]string `json:"labels"`
	Fingerprint string            `json:"fingerprint"`
	// Summary is one line fit for a phone lock screen.
	Summary     string            `json:"summary"`
	Description string            `json:"description"`
	Evidence    map[string]string `json:"evidence,omitempty"`
	StartsAt    time.Time         `json:"starts_at"`
	EndsAt      *time.Time        `json:"ends_at,omitempty"`
	// Replacement is set for disk problems: what the replacement guide needs.
	Replacement *Replacement `json:"replacement,omitempty"`
	// Silenced is set where alerts are shown (zwatch alerts, the status
	// page) on one a silence keeps from being sent; never in a notification.
	Silenced *Silenced `json:"silenced,omitempty"`
	// Incident names the incident (notification group) the alert is part
	// of, for people to answer: zwatch ack 3f2a9c1e.
	Incident string `json:"incident,omitempty"`
	// Ack is set while a person has taken the alert's incident on.
	Ack *Ack `json:"ack,omitempty"`
}

// Ack says that a person has taken an incident on: its alerts are not
// repeated. A change for the worse (a higher severity, a new alert in the
// incident) still pages, and a rise ends the acknowledgement.
type Ack struct {
	// By is who acknowledged, Source how: "cli", "telegram", "page".
	By     string    `json:"by"`
	Source string    `json:"source"`
	At     time.Time `json:"at"`
	// Severity is the alert's severity when it was acknowledged.
	Severity Severity `json:"severity"`
	Comment  string   `json:"comment,omitempty"`
}

// Covers reports whether the acknowledgement still holds for a: a rise
// above the severity acknowledged pages again.
func (k *Ack) Covers(a *Alert) bool {
	return k != nil && a.Severity.Rank() <= k.Severity.Rank()
}

// Silenced says which silence keeps an alert from being sent (package
// silence), until when, who made it and why.
type Silenced struct {
	ID        string    `json:"id"`
	EndsAt    time.Time `json:"ends_at"`
	CreatedBy string    `json:"created_by"`
	Comment   string    `json:"comment"`
}

// Replacement is the live context for a guided disk replacement.
type Replacement struct {
	Pool      string         `json:"pool"`
	TopVdev   string         `json:"top_vdev"`
	VdevPath  string         `json:"vdev_path,omitempty"`
	VdevGUID  string         `json:"vdev_guid,omitempty"`
	VdevState string         `json:"vdev_state,omitempty"`
	Was       string         `json:"was,omitempty"`
	Disk      *disk.Identity `json:"disk,omitempty"`
	// Margin is how many more device failures the top-level vdev survives.
	Margin *int `json:"margin,omitempty"`
	// PoolState is the pool's state when the alert was raised: a SUSPENDED
	// pool needs its device back, not a replacement.
	PoolState string `json:"pool_state,omitempty"`
}

// Fingerprint hashes a label set independent of map order.
func Fingerprint(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0xff})
		h.Write([]byte(labels[k]))
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Notification is what the rule engine hands to notifiers: one page's worth
// of alerts, already grouped, deduplicated and inhibited. It is the payload
// of zwatch.v1.<host>.alert (schema zwatch.v1.notification).
type Notification struct {
	// ID is unique per notification; channels use it to drop a redelivery.
	ID       string    `json:"id"`
	GroupKey string    `json:"group_key"`
	Host     string    `json:"host"`
	Status   State     `json:"status"` // firing if any alert fires, else resolved
	Alerts   []Alert   `json:"alerts"`
	Created  time.Time `json:"created"`
	// Test marks `zwatch notify test` and `zwatch simulate` messages.
	Test bool `json:"test,omitempty"`
	// Timing is when the fact that made it due was made and moved, when
	// known (a repeat has none): the latency budget of the page.
	Timing *Timing `json:"timing,omitempty"`
	// Escalation, from 1, marks the page of an unacknowledged critical
	// incident sent to the channels of notify.escalation's step of that
	// number, and only to them.
	Escalation int `json:"escalation,omitempty"`
	// Escalated is how many escalation steps the incident has reached: the
	// channels of those steps receive its later notices too (its repeats,
	// a rise, the resolved notice), besides the usual channels.
	Escalated int `json:"escalated,omitempty"`
}

// Timing is the path of the fact behind a notification, leg by leg, so a
// page's delay can be told apart: the source's own time of the event
// (ZFS's `time` in zpool events), when zwatch read it (the fact's
// collected_at), when the bus stored it, when the rule engine judged it,
// and when the notification was handed to the outbox. A zero time is not
// known. Each channel's delivery logs the legs with its own answer.
type Timing struct {
	Event     time.Time `json:"event,omitzero"`
	Read      time.Time `json:"read,omitzero"`
	Published time.Time `json:"published,omitzero"`
	Judged    time.Time `json:"judged,omitzero"`
	Outbox    time.Time `json:"outbox,omitzero"`
}

// Legs are the durations between the times t knows, in order, each named
// by the two ends ("event→read"), and the last known time, from which a
// delivery measures its own leg. Unknown times are skipped.
func (t *Timing) Legs() (legs []Leg, last time.Time) {
	if t == nil {
		return nil, time.Time{}
	}
	prevName := ""
	for _, p := range []struct {
		name string
		at   time.Time
	}{{"event", t.Event}, {"read", t.Read}, {"published", t.Published}, {"judged", t.Judged}, {"outbox", t.Outbox}} {
		if p.at.IsZero() {
			continue
		}
		if prevName != "" {
			legs = append(legs, Leg{Name: prevName + "→" + p.name, Took: p.at.Sub(last)})
		}
		prevName, last = p.name, p.at
	}
	return legs, last
}

// Leg is one step of a notification's path and how long it took.
type Leg struct {
	Name string
	Took time.Duration
}

// MaxSeverity is the highest severity among the firing alerts, or among all
// alerts when none fires.
func (n Notification) MaxSeverity() Severity {
	best := Severity("")
	for _, a := range n.Alerts {
		if a.State == Firing && a.Severity.Rank() > best.Rank() {
			best = a.Severity
		}
	}
	if best == "" {
		for _, a := range n.Alerts {
			if a.Severity.Rank() > best.Rank() {
				best = a.Severity
			}
		}
	}
	return best
}
