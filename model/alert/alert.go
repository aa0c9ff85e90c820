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
