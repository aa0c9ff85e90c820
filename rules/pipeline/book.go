package pipeline

import (
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// MaxResolved bounds the resolved alerts one host keeps waiting for their
// notice (gc).
const MaxResolved = 256

// Book is one host's alerts and groups: what the pipeline has decided and
// told. The rule engine embeds it in the host's saved state, so its fields
// are saved with their JSON names as they are.
type Book struct {
	// Alerts by fingerprint: pending, firing, and resolved ones whose
	// resolved notice is not sent yet.
	Alerts map[string]*Tracked `json:"alerts,omitempty"`
	// Groups by group key: when each group is due to be flushed.
	Groups map[string]*GroupState `json:"groups,omitempty"`
	// Flushed is when each group last sent a notification: news for a group
	// that has been quiet for group_wait goes out at once.
	Flushed map[string]time.Time `json:"flushed,omitempty"`
}

// NewBook is an empty book.
func NewBook() Book {
	return Book{Alerts: map[string]*Tracked{}, Groups: map[string]*GroupState{}, Flushed: map[string]time.Time{}}
}

// FixMaps makes a book read from JSON usable.
func (b *Book) FixMaps() {
	if b.Alerts == nil {
		b.Alerts = map[string]*Tracked{}
	}
	if b.Groups == nil {
		b.Groups = map[string]*GroupState{}
	}
	if b.Flushed == nil {
		b.Flushed = map[string]time.Time{}
	}
	for _, t := range b.Alerts {
		if t.Group != "" && t.A.Incident == "" { // saved before incidents had names
			joinGroup(t, t.Group)
		}
	}
}

// Tracked is one alert and what has been told about it.
type Tracked struct {
	A     alert.Alert `json:"a"`
	Scope string      `json:"scope"`
	// Serial is the physical disk the alert is about, when known.
	Serial string `json:"serial,omitempty"`
	// Pool is the pool for grouping alerts that carry no pool label.
	Pool     string        `json:"pool,omitempty"`
	For      time.Duration `json:"for,omitempty"`
	News     uint64        `json:"news,omitempty"`
	SentNews uint64        `json:"sent_news,omitempty"`
	// SentSeverity and LastSent describe the last firing notice; nil LastSent
	// means the person has not heard of this alert.
	SentSeverity alert.Severity `json:"sent_severity,omitempty"`
	LastSent     *time.Time     `json:"last_sent,omitempty"`
	Inhibited    bool           `json:"inhibited,omitempty"`
	Group        string         `json:"group,omitempty"`
	// Kept: its pool is not imported, so the facts that would resolve it
	// are missing; it stays firing, marked, until the pool is back or
	// forgotten (rules/pools.go).
	Kept bool `json:"kept,omitempty"`
	// IncidentBase is News when the alert became a part of a DiskIncident:
	// only growth past it is news for the incident (rules/correlate.go).
	IncidentBase *uint64 `json:"incident_base,omitempty"`
	// Cause is the timing of the fact that last gave it something to send
	// (it started, its severity rose, news, it resolved); the notification
	// that sends it carries it (alert.Notification.Timing).
	Cause *alert.Timing `json:"cause,omitempty"`
	// CriticalAt is when the alert was first paged as critical, and
	// Escalated the escalation steps its incident reached (escalate.go).
	CriticalAt *time.Time `json:"critical_at,omitempty"`
	Escalated  int        `json:"escalated,omitempty"`
}

// GroupState is a group waiting to be flushed.
type GroupState struct {
	FlushAt time.Time `json:"flush_at"`
}

// Less orders alerts for people: firing before resolved, worst first.
func Less(a, b *alert.Alert) bool {
	if (a.State == alert.Firing) != (b.State == alert.Firing) {
		return a.State == alert.Firing
	}
	if a.Severity.Rank() != b.Severity.Rank() {
		return a.Severity.Rank() > b.Severity.Rank()
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Fingerprint < b.Fingerprint
}

// CopyMap is a copy of m: alerts handed out share no labels or evidence
// with the book.
func CopyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
