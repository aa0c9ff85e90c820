package facts

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/zwatch/zwatch/bus"
)

// Handler takes in facts of one kind for a reader whose own state is C: it
// decodes each payload once, into the type the kind declares, and calls the
// reader's typed func. The zero Handler takes nothing in.
type Handler[C any] struct {
	kind Kind
	// handle is called with an envelope already decoded; handleMsg decodes
	// a whole message, envelope and payload in one pass.
	handle    func(c C, env bus.Envelope) error
	handleMsg func(c C, msg []byte) error
}

// HandlerOf makes the handler of kind k that decodes each payload into a T
// and calls fn with it. fn nil makes Unread(k).
func HandlerOf[T, C any](k KindOf[T], fn func(c C, env bus.Envelope, d *T) error) Handler[C] {
	return partHandler(k, fn)
}

// PartHandlerOf is HandlerOf for a reader that needs only part of the
// payload: each is decoded into P, whose JSON fields must be some of T's
// (CheckPart), so that a large payload costs only what is read of it.
func PartHandlerOf[P, T, C any](k KindOf[T], fn func(c C, env bus.Envelope, d *P) error) Handler[C] {
	return partHandler(k, fn)
}

// Unread is the handler of a kind a reader takes in without reading its
// payload (a fact that only counts as proof of life): it decodes nothing.
func Unread[C any](k Kind) Handler[C] { return Handler[C]{kind: k} }

func partHandler[P, T, C any](k KindOf[T], fn func(c C, env bus.Envelope, d *P) error) Handler[C] {
	h := Handler[C]{kind: k}
	if fn == nil {
		return h
	}
	h.handle = func(c C, env bus.Envelope) error {
		d := new(P)
		if err := json.Unmarshal(env.Data, d); err != nil {
			return fmt.Errorf("decode %s from %s: %w", env.Schema, env.Host, err)
		}
		return fn(c, env, d)
	}
	h.handleMsg = func(c C, msg []byte) error {
		d := new(P)
		m := envelopeOf{Data: d}
		if err := json.Unmarshal(msg, &m); err != nil {
			return fmt.Errorf("decode %s fact: %w", k.name, err)
		}
		if m.Schema != k.schema {
			return fmt.Errorf("schema %q, want %q", m.Schema, k.schema)
		}
		return fn(c, bus.Envelope{Schema: m.Schema, Host: m.Host, Collector: m.Collector, CollectedAt: m.CollectedAt}, d)
	}
	return h
}

// envelopeOf is a bus.Envelope whose data decodes straight into the
// payload, in the same pass as the envelope.
type envelopeOf struct {
	Schema      string    `json:"schema"`
	Host        string    `json:"host"`
	Collector   string    `json:"collector"`
	CollectedAt time.Time `json:"collected_at"`
	Data        any       `json:"data"`
}

// Kind is the kind the handler takes in; nil for the zero Handler.
func (h Handler[C]) Kind() Kind { return h.kind }

// Handle decodes env's payload and calls the handler's func with it. An
// error says the payload could not be read ("decode <schema> from <host>:
// …") or is the func's own.
func (h Handler[C]) Handle(c C, env bus.Envelope) error {
	if h.handle == nil {
		return nil
	}
	return h.handle(c, env)
}

// HandleMsg decodes a whole message (envelope and payload in one pass),
// checks its schema is the handler's kind, and calls the func with it.
// The envelope it passes has no Data: the payload went straight into the
// typed value.
func (h Handler[C]) HandleMsg(c C, msg []byte) error {
	if h.handleMsg == nil {
		return nil
	}
	return h.handleMsg(c, msg)
}

// Handlers is a reader's handlers, one per kind of fact it reads, found by
// the kind's name. The zero value is empty and ready to use.
type Handlers[C any] struct {
	byName map[string]Handler[C]
	kinds  []Kind
}

// On registers fn to take in facts of kind k, replacing an earlier
// handler of k. Each payload is decoded into a T once, before fn.
func On[T, C any](hs *Handlers[C], k KindOf[T], fn func(c C, env bus.Envelope, d *T) error) {
	hs.Add(HandlerOf(k, fn))
}

// OnPart is On for a reader that needs only part of the payload (P, see
// PartHandlerOf).
func OnPart[P, T, C any](hs *Handlers[C], k KindOf[T], fn func(c C, env bus.Envelope, d *P) error) {
	hs.Add(PartHandlerOf(k, fn))
}

// Add registers h, replacing an earlier handler of its kind.
func (hs *Handlers[C]) Add(h Handler[C]) {
	if hs.byName == nil {
		hs.byName = map[string]Handler[C]{}
	}
	name := h.kind.Name()
	if _, ok := hs.byName[name]; !ok {
		hs.kinds = append(hs.kinds, h.kind)
	}
	hs.byName[name] = h
}

// Lookup returns the handler of the kind named name.
func (hs *Handlers[C]) Lookup(name string) (Handler[C], bool) {
	h, ok := hs.byName[name]
	return h, ok
}

// ForSubject returns the handler of the kind a subject carries, and the
// subject's host token; ok is false for a kind not handled here.
func (hs *Handlers[C]) ForSubject(subject string) (h Handler[C], hostToken string, ok bool) {
	hostToken, k, ok := kindOfSubject(subject, hs.kinds)
	if !ok {
		return Handler[C]{}, hostToken, false
	}
	return hs.byName[k.Name()], hostToken, true
}

// Kinds are the kinds handled, in the order they were first registered:
// what a reader subscribes to.
func (hs *Handlers[C]) Kinds() []Kind { return append([]Kind(nil), hs.kinds...) }
