//go:build linux

package daemon

import (
	"testing"

	"github.com/prometheus/procfs"
)

func rssKB(t *testing.T) int {
	t.Helper()
	p, err := procfs.Self()
	if err != nil {
		t.Skip(err)
	}
	s, err := p.NewStatus()
	if err != nil {
		t.Skip(err)
	}
	return int(s.VmRSS >> 10)
}

// The test binary is a Go executable like zwatch: dropping its mapped pages
// must lower RSS and leave the program running normally.
func TestTrimExecutableRSS(t *testing.T) {
	before := rssKB(t)
	trimExecutableRSS()
	after := rssKB(t)
	if after >= before {
		t.Fatalf("RSS %d kB → %d kB, want lower", before, after)
	}
	t.Logf("RSS %d kB → %d kB", before, after)
	// Code still runs after its pages were dropped.
	if Version == "" {
		t.Fatal("unreachable")
	}
}
