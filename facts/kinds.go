// Package facts holds what collectors tell the rule engine: the kinds of
// fact, the subject each travels on, and the typed payload of each. It sits
// between collectors (which write facts) and rules (which read them), so that
// neither imports the other.
//
// Adding a kind of fact is its payload type, one Define and one line in
// Kinds; whatever reads it registers a typed handler (On, handlers.go).
package facts

import (
	"strings"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// The kinds of fact, each bound to its subject suffix (zwatch.v1.<host>.<name>),
// its schema (bus.Schema(name)) and its payload. The names are the wire
// format of running fleets: they never change.
var (
	ZpoolStatus   = Define[StatusData]("zpool.status")
	ZpoolCapacity = Define[CapacityData]("zpool.capacity")
	ZpoolEvent    = Define[EventData]("zpool.event")
	// PoolKstat is each pool's state as the kernel reports it without
	// taking the pool's locks.
	PoolKstat = Define[PoolKstatData]("zpool.kstat")
	// PoolImport is what `zpool import` finds but is not imported.
	PoolImport = Define[PoolImportData]("zpool.import")
	// PoolForget says the owner declared a pool gone for good
	// (`zwatch forget-pool`).
	PoolForget = Define[PoolForgetData]("zpool.forget")
	// IncidentAction is a person's answer to an incident (`zwatch ack`).
	IncidentAction = Define[IncidentActionData]("incident.action")
	// Datasets is every filesystem and volume with its mount and key state.
	Datasets = Define[DatasetsData]("zfs.datasets")
	// Snapshots sums up every dataset's snapshots.
	Snapshots = Define[SnapshotsData]("zfs.snapshots")
	// KernelLog is what the kernel logged about disks, links and controllers.
	KernelLog = Define[KernelLogData]("kernel.log")
	// Disks lists the disks present on the machine.
	Disks = Define[DisksData]("disk.inventory")
	// DiskForget says the owner removed a disk for good (`zwatch forget-disk`).
	DiskForget = Define[DiskForgetData]("disk.forget")
	// ZFSVersion is the ZFS userland and kernel module versions.
	ZFSVersion = Define[ZFSVersionData]("zfs.version")
	// Smart is one disk's report; its subject ends in the disk's serial.
	Smart          = Define[smart.Report]("smart", PerTarget())
	ARC            = Define[zfs.ARC]("arc")
	CollectorError = Define[CollectorErrorData]("collector.error")
	Maintenance    = Define[MaintenanceData]("maintenance")
	Heartbeat      = Define[HeartbeatData]("heartbeat")
)

// Kinds lists every kind of fact, in the order docs/subjects.md presents them.
func Kinds() []Kind {
	return []Kind{
		ZpoolCapacity,
		ZpoolStatus,
		ZpoolEvent,
		PoolKstat,
		PoolImport,
		PoolForget,
		IncidentAction,
		Datasets,
		Snapshots,
		ZFSVersion,
		KernelLog,
		Disks,
		DiskForget,
		Smart,
		ARC,
		CollectorError,
		Maintenance,
		Heartbeat,
	}
}

// StreamSubjects are the subjects of the facts stream (bus.StreamFacts), for
// every host: one per kind, with a wildcard for a per-target kind.
func StreamSubjects() []string {
	kinds := Kinds()
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.Filter("*"))
	}
	return out
}

// kindOfSubject finds which of kinds a subject carries, e.g. smart for
// zwatch.v1.nas1.smart.WD-123, and its host token, nas1.
func kindOfSubject(subject string, kinds []Kind) (host string, k Kind, ok bool) {
	subject = bus.Canonical(subject)
	host, ok = bus.HostOf(subject)
	if !ok {
		return "", nil, false
	}
	rest := subject[len("zwatch."+bus.Version+".")+len(host)+1:]
	for _, k := range kinds {
		if rest == k.Name() || (k.PerTarget() && strings.HasPrefix(rest, k.Name()+".")) {
			return host, k, true
		}
	}
	return host, nil, false
}

// KindOfSchema returns the kind named by an envelope's schema, e.g. "smart"
// for zwatch.v1.smart; ok is false for a schema of another version or
// namespace.
func KindOfSchema(schema string) (kind string, ok bool) {
	return strings.CutPrefix(schema, "zwatch."+bus.Version+".")
}
