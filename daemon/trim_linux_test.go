//go:build linux

package daemon

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func rssKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Skip("no VmRSS")
	return 0
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
