package pipeline

import "testing"

// A counter is news only at the next power of ten.
func TestCountLevel(t *testing.T) {
	for n, want := range map[uint64]uint64{0: 0, 1: 1, 9: 1, 10: 2, 99: 2, 100: 3, 209: 3, 1000: 4, 1<<64 - 1: 20} {
		if got := countLevel(n); got != want {
			t.Errorf("countLevel(%d) = %d, want %d", n, got, want)
		}
	}
}
