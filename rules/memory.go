package rules

import "encoding/json"

// A rule that must remember something of a host between facts (counters
// to compare with the next poll, when a condition began, what a fact said
// last) declares that memory in its own file and lists it in its Rule:
//
//	// arcThrottle is what ARCThrottle remembers of a host.
//	type arcThrottle struct {
//		At time.Time `json:"at"`
//	}
//
//	var arcThrottleMemory = remember[arcThrottle]("arc_throttle", 1, nil)
//
//	Rule{…, Memory: []memoryDef{arcThrottleMemory}}
//
// Its code reads the memory with arcThrottleMemory.peek(c.h), nil while
// the host has none, and writes through arcThrottleMemory.of(c.h), which
// makes it on first use; it marks the host dirty (c.h.dirty) when it
// changed something, as for any state. The memory is saved with the
// host's state (hostState.Memory, under its name) and read back lazily:
// an entry stays the JSON it was saved as until its owner first reads it.
//
// The version is that of T's JSON shape. A change that an older entry
// would be misread under (a field renamed, a meaning changed) bumps it; an
// entry of an older version is then read by migrate, or dropped when
// migrate is nil or fails, and one of a newer version (written by a later
// release) is dropped: a rule may forget, never misread. Each rule keeps
// its memory bounded itself; on load, a state keeps only the memories its
// engine's catalogue lists (ruleSet.dropUnowned).

// legacyVersion is the version of an entry moved from the top-level key
// where 41d2458 and earlier kept a rule's memory (legacyMemory): its
// owner's migrate reads that key's JSON.
const legacyVersion = 0

// memory is one rule's typed memory of a host. Declare it once, at package
// level, with remember; it holds no state itself.
type memory[T any] struct {
	name    string
	version int
	migrate func(version int, saved json.RawMessage) (*T, error)
}

// remember declares a rule's memory: its name in the host's state, unique
// in the catalogue, the version of T's JSON shape (1 for a new memory; 0
// is legacyVersion), and how to read an older version's JSON (nil: such
// entries are dropped).
func remember[T any](name string, version int, migrate func(version int, saved json.RawMessage) (*T, error)) *memory[T] {
	return &memory[T]{name: name, version: version, migrate: migrate}
}

// memoryDef is a memory as the catalogue knows it, whatever its type.
type memoryDef interface{ memoryName() string }

func (m *memory[T]) memoryName() string { return m.name }

// memo is one memory in a host's state: the version of its shape and its
// value, the JSON as saved (json.RawMessage) until its owner first reads
// it, then *T.
type memo struct {
	Version int `json:"v"`
	Data    any `json:"data"`
}

// UnmarshalJSON keeps the value as saved: only its owner knows its type.
func (m *memo) UnmarshalJSON(data []byte) error {
	var saved struct {
		Version int             `json:"v"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		return err
	}
	m.Version, m.Data = saved.Version, saved.Data
	return nil
}

// peek returns the host's memory, nil while it has none. An entry it
// cannot read (another version without a migration, or damaged) is
// dropped, as if there were none.
func (m *memory[T]) peek(h *hostState) *T {
	saved := h.Memory[m.name]
	if saved == nil {
		return nil
	}
	if v, ok := saved.Data.(*T); ok {
		return v
	}
	v := m.read(saved)
	if v == nil {
		delete(h.Memory, m.name)
		return nil
	}
	saved.Version, saved.Data = m.version, v
	return v
}

// of returns the host's memory, made empty on first use.
func (m *memory[T]) of(h *hostState) *T {
	if v := m.peek(h); v != nil {
		return v
	}
	v := new(T)
	if h.Memory == nil {
		h.Memory = map[string]*memo{}
	}
	h.Memory[m.name] = &memo{Version: m.version, Data: v}
	return v
}

// read decodes an entry as saved, migrating an older version; nil when it
// cannot.
func (m *memory[T]) read(saved *memo) *T {
	raw, ok := saved.Data.(json.RawMessage)
	if !ok {
		return nil // another memory's value under this name: two memories share it
	}
	switch {
	case saved.Version == m.version:
		v := new(T)
		if json.Unmarshal(raw, v) != nil {
			return nil
		}
		return v
	case saved.Version < m.version && m.migrate != nil:
		v, err := m.migrate(saved.Version, raw)
		if err != nil {
			return nil
		}
		return v
	}
	return nil
}

// sameShape is a migrate for a memory whose older JSON reads as T still.
func sameShape[T any](_ int, saved json.RawMessage) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(saved, v); err != nil {
		return nil, err
	}
	return v, nil
}

// intoField is a migrate for a memory whose older JSON is one field of T
// now, the one field returns.
func intoField[T, F any](field func(*T) *F) func(int, json.RawMessage) (*T, error) {
	return func(_ int, saved json.RawMessage) (*T, error) {
		v := new(T)
		if err := json.Unmarshal(saved, field(v)); err != nil {
			return nil, err
		}
		return v, nil
	}
}

// memoryNames are the names of the memories a catalogue lists.
func memoryNames(catalogue []Rule) map[string]bool {
	names := map[string]bool{}
	for _, r := range catalogue {
		for _, m := range r.Memory {
			names[m.memoryName()] = true
		}
	}
	return names
}

// dropUnowned forgets the memories of h that no rule of the catalogue
// lists (a rule removed since they were saved, a name no release wrote),
// so the memories of a saved state are at most the catalogue's.
func (s *ruleSet) dropUnowned(h *hostState) {
	for name := range h.Memory {
		if !s.memories[name] {
			delete(h.Memory, name)
		}
	}
}
