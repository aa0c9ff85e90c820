package facts

import (
	"slices"
	"testing"
)

func TestKindOfSubject(t *testing.T) {
	for subj, want := range map[string]Kind{
		"zwatch.v1.nas1.zpool.status":    ZpoolStatus,
		"zwatch.v1.nas1.smart.WD-1":      Smart,
		"zwatch.v1.nas1.collector.error": CollectorError,
		"zwatch.v1.nas1.heartbeat":       Heartbeat,
	} {
		host, kind, ok := kindOfSubject(subj, Kinds())
		if !ok || host != "nas1" || kind != want {
			t.Errorf("kindOfSubject(%q) = %q %v %v, want nas1 %v", subj, host, kind, ok, want)
		}
	}
	for _, subj := range []string{"other.v1.x.y", "zwatch.v1.nas1.alert", "zwatch.v1.nas1.smartish"} {
		if _, _, ok := kindOfSubject(subj, Kinds()); ok {
			t.Errorf("kindOfSubject(%q) ok, want not a fact", subj)
		}
	}
}

func TestKindOfSchema(t *testing.T) {
	if kind, ok := KindOfSchema(Smart.Schema()); !ok || kind != "smart" {
		t.Errorf("KindOfSchema(%s) = %q %v", Smart.Schema(), kind, ok)
	}
	if _, ok := KindOfSchema("zwatch.v2.smart"); ok {
		t.Error("KindOfSchema takes another version")
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

// The kinds' names, schemas and subjects are the wire format running fleets
// speak: a change here must be a new kind, never an edit.
func TestKindsWireFormat(t *testing.T) {
	want := []struct {
		name      string
		perTarget bool
		payload   string
	}{
		{"zpool.capacity", false, "facts.CapacityData"},
		{"zpool.status", false, "facts.StatusData"},
		{"zpool.event", false, "facts.EventData"},
		{"zpool.kstat", false, "facts.PoolKstatData"},
		{"zpool.import", false, "facts.PoolImportData"},
		{"zpool.forget", false, "facts.PoolForgetData"},
		{"incident.action", false, "facts.IncidentActionData"},
		{"zfs.datasets", false, "facts.DatasetsData"},
		{"zfs.snapshots", false, "facts.SnapshotsData"},
		{"zfs.version", false, "facts.ZFSVersionData"},
		{"kernel.log", false, "facts.KernelLogData"},
		{"disk.inventory", false, "facts.DisksData"},
		{"disk.forget", false, "facts.DiskForgetData"},
		{"smart", true, "smart.Report"},
		{"arc", false, "zfs.ARC"},
		{"collector.error", false, "facts.CollectorErrorData"},
		{"maintenance", false, "facts.MaintenanceData"},
		{"heartbeat", false, "facts.HeartbeatData"},
	}
	kinds := Kinds()
	if len(kinds) != len(want) {
		t.Fatalf("%d kinds, want %d", len(kinds), len(want))
	}
	for i, k := range kinds {
		w := want[i]
		if k.Name() != w.name || k.PerTarget() != w.perTarget || k.Payload().String() != w.payload {
			t.Errorf("kind %d is %s (per target %v) of %s, want %s (%v) of %s",
				i, k.Name(), k.PerTarget(), k.Payload(), w.name, w.perTarget, w.payload)
		}
		if k.Schema() != "zwatch.v1."+w.name {
			t.Errorf("%s: schema %s", w.name, k.Schema())
		}
		subject := "zwatch.v1.*." + w.name
		if w.perTarget {
			subject += ".>"
		}
		if got := StreamSubjects()[i]; got != subject {
			t.Errorf("%s: stream subject %s, want %s", w.name, got, subject)
		}
	}
}
