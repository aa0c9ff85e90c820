//go:build linux

package daemon

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The flag is process-wide; leaving it set in the test binary only keeps
// its heap in small pages.
func TestDisableHugePages(t *testing.T) {
	if err := disableHugePages(); err != nil {
		t.Fatalf("prctl(PR_SET_THP_DISABLE): %v", err)
	}
	v, err := unix.PrctlRetInt(unix.PR_GET_THP_DISABLE, 0, 0, 0, 0)
	if err != nil || v != 1 {
		t.Fatalf("PR_GET_THP_DISABLE = %d, %v; want 1", v, err)
	}
}
