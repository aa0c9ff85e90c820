package silence

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/zwatch/zwatch/model/alert"
)

// State is where a silence is in its life, as in Alertmanager.
type State string

const (
	Pending State = "pending" // its start is still to come
	Active  State = "active"  // it silences what it matches
	Expired State = "expired" // it ended, by itself or by `zwatch silence expire`
)

// Retention is how long an expired silence is kept, for `zwatch silence
// list --expired` (Alertmanager's default data retention).
const Retention = 120 * time.Hour

// MaxComment bounds a silence's comment.
const MaxComment = 1024

// Silence keeps the alerts it matches from being sent between StartsAt and
// EndsAt. It is the value of key "silence.<ID>" in bus.StateBucket.
type Silence struct {
	ID       string    `json:"id"`
	Matchers Matchers  `json:"matchers"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	// CreatedBy is who made it and Comment why.
	CreatedBy string `json:"created_by"`
	Comment   string `json:"comment"`
	// MaxSeverity is the highest severity it silences: an alert that rises
	// above it is sent (a silenced warning that turns critical pages).
	MaxSeverity alert.Severity `json:"max_severity"`
	UpdatedAt   time.Time      `json:"updated_at"`
	// ExpiredBy names who ended it early (zwatch silence expire); a
	// silence ended so sends no expiry notice.
	ExpiredBy string `json:"expired_by,omitempty"`
	// Noticed is when the rule engine's outbox took its expiry notice.
	Noticed *time.Time `json:"noticed,omitempty"`

	// rev is the revision of the state bucket entry it was read from.
	rev uint64
}

// Revision is the state bucket revision the silence was read at (0 for
// one not read from the bucket).
func (s *Silence) Revision() uint64 { return s.rev }

// NewID makes a random silence ID in UUID form, as Alertmanager's are.
func NewID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("silence ID: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// validID: what NewID makes (the ID is part of a bucket key).
func validID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, r := range id {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if r != '-' {
				return false
			}
			continue
		}
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// State is the silence's state at now.
func (s *Silence) State(now time.Time) State {
	switch {
	case now.Before(s.StartsAt):
		return Pending
	case now.Before(s.EndsAt):
		return Active
	}
	return Expired
}

// Mutes reports whether the silence keeps an alert with these labels
// (get returns a label's value, "" when absent) and severity from being
// sent at now: it is active, every matcher holds, and the severity is not
// above what it covers.
func (s *Silence) Mutes(get func(name string) string, sev alert.Severity, now time.Time) bool {
	return s.State(now) == Active && sev.Rank() <= s.MaxSeverity.Rank() && s.Matchers.Matches(get)
}

// Validate checks a silence before it is stored, and after it is read.
func (s *Silence) Validate() error {
	if !validID(s.ID) {
		return fmt.Errorf("silence ID %q is not a UUID as zwatch makes them", s.ID)
	}
	if err := s.Matchers.Validate(); err != nil {
		return err
	}
	switch {
	case s.StartsAt.IsZero() || s.EndsAt.IsZero():
		return errors.New("a silence needs a start and an end")
	case s.EndsAt.Before(s.StartsAt):
		return fmt.Errorf("the silence ends (%s) before it starts (%s)", s.EndsAt.Format(time.RFC3339), s.StartsAt.Format(time.RFC3339))
	case s.MaxSeverity.Rank() == 0:
		return fmt.Errorf("max severity %q is not info, warning or critical", s.MaxSeverity)
	case len(s.Comment) > MaxComment:
		return fmt.Errorf("comment longer than %d bytes", MaxComment)
	case !utf8.ValidString(s.Comment) || !utf8.ValidString(s.CreatedBy) || len(s.CreatedBy) > 256:
		return errors.New("comment or author is not valid UTF-8 text of a sensible length")
	}
	return nil
}

// Mark is what an alert it silences shows: until when, by whom, why.
func (s *Silence) Mark() *alert.Silenced {
	return &alert.Silenced{ID: s.ID, EndsAt: s.EndsAt, CreatedBy: s.CreatedBy, Comment: s.Comment}
}

// Short is the start of the ID people type (zwatch silence expire takes
// any unique prefix).
func (s *Silence) Short() string {
	if len(s.ID) < 8 {
		return s.ID
	}
	return s.ID[:8]
}

// Describe is the silence in a few words for people and logs.
func (s *Silence) Describe() string { return "silence " + s.Short() + " for " + s.Matchers.String() }
