package config

import (
	"strings"
	"testing"
	"time"
)

func TestMemoryDefaultsOffAndSet(t *testing.T) {
	l, err := Parse(strings.NewReader("host: nas1\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if m := l.Config.Memory; m.LimitMB != 0 || m.SettleAfter != 0 {
		t.Errorf("defaults: %+v, want both off", m)
	}
	l, err = Parse(strings.NewReader("host: nas1\nmemory:\n  limit_mb: 64\n  settle_after: 2m\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if m := l.Config.Memory; m.LimitMB != 64 || m.SettleAfter.D() != 2*time.Minute {
		t.Errorf("set: %+v, want 64 MiB and 2m", m)
	}
}
