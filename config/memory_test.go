package config

import (
	"strings"
	"testing"
	"time"
)

func TestMemoryDefaultsAndOff(t *testing.T) {
	l, err := Parse(strings.NewReader("host: nas1\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if m := l.Config.Memory; m.Limit(RoleAll) != 64 || m.Limit(RoleAgent) != 64 || m.Limit(RoleServer) != 0 || m.SettleAfter.D() != 2*time.Minute {
		t.Errorf("defaults: %+v, want 64 MiB (none on a fleet server) and 2m", m)
	}
	l, err = Parse(strings.NewReader("host: nas1\nmemory:\n  limit_mb: 0\n  settle_after: 0s\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if m := l.Config.Memory; m.Limit(RoleAll) != 0 || m.SettleAfter != 0 {
		t.Errorf("both off: %+v", m)
	}
}

func TestMemoryLimitSetOnAServer(t *testing.T) {
	l, err := Parse(strings.NewReader("host: nas1\nmemory:\n  limit_mb: 512\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config.Memory.Limit(RoleServer); got != 512 {
		t.Errorf("a limit set for a server: %d, want 512", got)
	}
}
