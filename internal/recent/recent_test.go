package recent

import "testing"

func TestSetForgetsOldestFirst(t *testing.T) {
	s := New[string](2)
	s.Add("a")
	s.Add("b")
	s.Add("a") // already there: not newer
	s.Add("c")
	if s.Has("a") || !s.Has("b") || !s.Has("c") {
		t.Errorf("after a, b, a, c with room for 2: a=%v b=%v c=%v, want false true true", s.Has("a"), s.Has("b"), s.Has("c"))
	}
}
