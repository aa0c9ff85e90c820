package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/notifiers/answer"
)

// An offer is the question a person was asked ("replace X with Y?"): what
// exactly the confirmation will run. It lives in the bus's state bucket,
// so the confirmation needs no more than its ID in a button's 64 bytes, and
// it is taken once, with compare-and-set: two taps, or two servers, cannot
// both start a replacement.

// OfferFor is how long a question can be answered: long enough to read
// it, short enough that the disks have not changed since.
const OfferFor = 15 * time.Minute

// offerKeyPrefix keys the offers in the state bucket.
const offerKeyPrefix = "replace-offer."

// Offer states.
const (
	stateAsked   = "asked"
	stateTaken   = "taken"
	stateDropped = "cancelled"
)

// Offer is one question and the replacement it would start.
type Offer struct {
	ID string `json:"id"`
	// Question is the ID of the question that offered it beside others
	// (its first offer's ID): Cancel, or a confirmation, closes them all.
	Question string `json:"question"`
	Host     string `json:"host"`
	Incident string `json:"incident"`
	Pool     string `json:"pool"`
	// Old and OldPath are the device to replace, its GUID and its path as
	// the alert named them (zwatch replace takes either); OldName is as
	// zpool shows it, for people.
	Old     string `json:"old"`
	OldPath string `json:"old_path,omitempty"`
	OldName string `json:"old_name"`
	// New is the by-id path of the whole new disk; NewAbout its size,
	// model and serial.
	New      string `json:"new"`
	NewAbout string `json:"new_about"`
	// Command is the zpool replace argv the confirmation runs.
	Command []string  `json:"command"`
	Expires time.Time `json:"expires"`
	State   string    `json:"state"`
	By      string    `json:"by,omitempty"`
	Source  string    `json:"source,omitempty"`
}

// ErrOfferGone: no such question, or it was answered, cancelled or timed
// out; the reply says so without saying which.
var ErrOfferGone = answer.ErrClosed

func newOfferID() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func stateKV(ctx context.Context, b *bus.Bus) (jetstream.KeyValue, error) {
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("replacement: open the state bucket: %w", err)
	}
	return kv, nil
}

// saveOffer stores a new offer.
func saveOffer(ctx context.Context, kv jetstream.KeyValue, o *Offer) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	if _, err := kv.Create(ctx, offerKeyPrefix+o.ID, data); err != nil {
		return fmt.Errorf("replacement: record the question: %w", err)
	}
	return nil
}

// takeOffer moves the offer id from asked to state for by, once: a second
// taker, an expired or unknown offer get ErrOfferGone.
func takeOffer(ctx context.Context, kv jetstream.KeyValue, id, state, by, source string, now time.Time) (Offer, error) {
	e, err := kv.Get(ctx, offerKeyPrefix+id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Offer{}, ErrOfferGone
	}
	if err != nil {
		return Offer{}, fmt.Errorf("replacement: read the question: %w", err)
	}
	var o Offer
	if err := json.Unmarshal(e.Value(), &o); err != nil || o.State != stateAsked || !now.Before(o.Expires) {
		return Offer{}, ErrOfferGone
	}
	o.State, o.By, o.Source = state, by, source
	data, err := json.Marshal(o)
	if err != nil {
		return Offer{}, err
	}
	if _, err := kv.Update(ctx, offerKeyPrefix+id, data, e.Revision()); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return Offer{}, ErrOfferGone // another tap took it first
		}
		return Offer{}, fmt.Errorf("replacement: take the question: %w", err)
	}
	return o, nil
}

// dropQuestion closes the open offers of question but keep, for by; it
// returns how many it closed.
func dropQuestion(ctx context.Context, kv jetstream.KeyValue, question, keep, by, source string, now time.Time) int {
	lister, err := kv.ListKeysFiltered(ctx, offerKeyPrefix+"*")
	if err != nil {
		return 0
	}
	n := 0
	for k := range lister.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var o Offer
		if json.Unmarshal(e.Value(), &o) != nil || o.Question != question || o.ID == keep {
			continue
		}
		if _, err := takeOffer(ctx, kv, o.ID, stateDropped, by, source, now); err == nil {
			n++
		}
	}
	return n
}

// forgetOldOffers removes offers past their time; best effort, so the
// bucket keeps only the last OfferFor's.
func forgetOldOffers(ctx context.Context, kv jetstream.KeyValue, now time.Time) {
	lister, err := kv.ListKeysFiltered(ctx, offerKeyPrefix+"*")
	if err != nil {
		return
	}
	for k := range lister.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var o Offer
		if json.Unmarshal(e.Value(), &o) != nil || now.After(o.Expires.Add(time.Hour)) {
			_ = kv.Delete(ctx, k)
		}
	}
}
