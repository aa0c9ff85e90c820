package facts

import (
	"reflect"

	"github.com/zwatch/zwatch/bus"
)

// Kind is one kind of fact on the bus, whatever its payload: what subjects,
// streams, docs and dispatch by name need. Only Define makes kinds.
type Kind interface {
	// Name is the subject suffix and the schema's last part, e.g. "zpool.status".
	Name() string
	// Schema is the envelope schema facts of this kind carry, bus.Schema(Name).
	Schema() string
	// PerTarget: the subject ends in one more token naming what the fact
	// is about (a disk serial), zwatch.v1.<host>.<name>.<target>.
	PerTarget() bool
	// Filter is the subject filter matching this kind's facts of one host
	// token ("*" for every host).
	Filter(hostToken string) string
	// Payload is the type its data decodes into.
	Payload() reflect.Type
	// declared seals the interface: a kind is one Define.
	declared()
}

// KindOf is a kind of fact whose payload is T. It is one pointer wide, so
// it passes and converts to Kind without copying.
type KindOf[T any] struct{ *kind }

type kind struct {
	name, schema string
	perTarget    bool
	payload      reflect.Type
}

// Option sets how a kind's facts travel (Define).
type Option func(*kind)

// PerTarget makes a kind whose subjects end in the target each fact is
// about, such as a disk's serial.
func PerTarget() Option { return func(k *kind) { k.perTarget = true } }

// Define declares the kind of fact name whose payload is T. The name is part
// of the wire format: its subject suffix and schema.
func Define[T any](name string, opts ...Option) KindOf[T] {
	k := &kind{name: name, schema: bus.Schema(name), payload: reflect.TypeFor[T]()}
	for _, o := range opts {
		o(k)
	}
	return KindOf[T]{k}
}

func (k *kind) Name() string          { return k.name }
func (k *kind) Schema() string        { return k.schema }
func (k *kind) PerTarget() bool       { return k.perTarget }
func (k *kind) Payload() reflect.Type { return k.payload }
func (k *kind) declared()             {}

func (k *kind) Filter(hostToken string) string {
	s := "zwatch." + bus.Version + "." + hostToken + "." + k.name
	if k.perTarget {
		s += ".>"
	}
	return s
}

// String is the kind's name, for logs and test failures.
func (k *kind) String() string { return k.name }
