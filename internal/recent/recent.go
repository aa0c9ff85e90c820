// Package recent is a bounded set that forgets its oldest members first:
// what the rule engine and the channels remember of messages lately seen,
// so a redelivery is recognised without keeping everything.
package recent

import "sync"

// Set holds at most max members; adding one more forgets the oldest.
// It is safe for concurrent use.
type Set[K comparable] struct {
	mu    sync.Mutex
	max   int
	order []K
	set   map[K]struct{}
}

// New returns an empty set of at most max members.
func New[K comparable](max int) *Set[K] {
	return &Set[K]{max: max, set: map[K]struct{}{}}
}

// Has reports whether k is a member.
func (s *Set[K]) Has(k K) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.set[k]
	return ok
}

// Add makes k a member, forgetting the oldest member past max.
func (s *Set[K]) Add(k K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.set[k]; ok {
		return
	}
	s.set[k] = struct{}{}
	s.order = append(s.order, k)
	if len(s.order) > s.max {
		delete(s.set, s.order[0])
		s.order = s.order[1:]
	}
}
