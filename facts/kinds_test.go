package facts

import (
	"slices"
	"testing"
)

func TestKindOfSubject(t *testing.T) {
	for subj, want := range map[string]string{
		"zwatch.v1.nas1.zpool.status":    KindZpoolStatus,
		"zwatch.v1.nas1.smart.WD-1":      KindSmart,
		"zwatch.v1.nas1.collector.error": KindCollectorError,
		"zwatch.v1.nas1.heartbeat":       KindHeartbeat,
	} {
		host, kind, ok := KindOfSubject(subj)
		if !ok || host != "nas1" || kind != want {
			t.Errorf("KindOfSubject(%q) = %q %q %v, want nas1 %q", subj, host, kind, ok, want)
		}
	}
	for _, subj := range []string{"other.v1.x.y", "zwatch.v1.nas1.alert", "zwatch.v1.nas1.smartish"} {
		if _, _, ok := KindOfSubject(subj); ok {
			t.Errorf("KindOfSubject(%q) ok, want not a fact", subj)
		}
	}
}

func TestStreamSubjects(t *testing.T) {
	got := StreamSubjects()
	for _, want := range []string{"zwatch.v1.*.zpool.status", "zwatch.v1.*.smart.>", "zwatch.v1.*.heartbeat"} {
		if !slices.Contains(got, want) {
			t.Errorf("StreamSubjects() = %v, lacks %s", got, want)
		}
	}
	if slices.Contains(got, "zwatch.v1.*.alert") {
		t.Errorf("StreamSubjects() holds the alert subject: the two streams would overlap")
	}
}
