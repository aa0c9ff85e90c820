// Package facts holds what collectors tell the rule engine: the kinds of
// fact, the subject each travels on, and the typed payload of each. It sits
// between collectors (which write facts) and rules (which read them), so that
// neither imports the other.
//
// Adding a kind of fact is its payload type, one Define and one line in
// Kinds.
package facts

import (
	"strings"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/maintenance"
	"github.com/zwatch/zwatch/smart"
	"github.com/zwatch/zwatch/zfs"
)

// The names of the kinds below, while their uses move to the kinds.
const (
	KindZpoolStatus   = "zpool.status"
	KindZpoolCapacity = "zpool.capacity"
	KindZpoolEvent    = "zpool.event"
	// KindPoolKstat is each pool's state as the kernel reports it without
	// taking the pool's locks (PoolKstatData).
	KindPoolKstat = "zpool.kstat"
	// KindPoolImport is what `zpool import` finds but is not imported
	// (PoolImportData).
	KindPoolImport = "zpool.import"
	// KindPoolForget says the owner declared a pool gone for good
	// (`zwatch forget-pool`, PoolForgetData).
	KindPoolForget = "zpool.forget"
	// KindDatasets is every filesystem and volume with its mount and key
	// state (DatasetsData).
	KindDatasets = "zfs.datasets"
	// KindSnapshots sums up every dataset's snapshots (SnapshotsData).
	KindSnapshots = "zfs.snapshots"
	// KindKernelLog is what the kernel logged about disks, links and
	// controllers (KernelLogData).
	KindKernelLog = "kernel.log"
	// KindDisks lists the disks present on the machine (DisksData).
	KindDisks = "disk.inventory"
	// KindDiskForget says the owner removed a disk for good (`zwatch
	// forget-disk`, DiskForgetData).
	KindDiskForget = "disk.forget"
	// KindZFSVersion is the ZFS userland and kernel module versions
	// (ZFSVersionData).
	KindZFSVersion     = "zfs.version"
	KindSmart          = "smart" // subject adds .<serial>
	KindARC            = "arc"
	KindCollectorError = "collector.error"
	KindMaintenance    = "maintenance"
	KindHeartbeat      = "heartbeat"
)

// The kinds of fact, each bound to its subject suffix (zwatch.v1.<host>.<name>),
// its schema (bus.Schema(name)) and its payload.
var (
	ZpoolStatus    = Define[StatusData](KindZpoolStatus)
	ZpoolCapacity  = Define[CapacityData](KindZpoolCapacity)
	ZpoolEvent     = Define[EventData](KindZpoolEvent)
	PoolKstat      = Define[PoolKstatData](KindPoolKstat)
	PoolImport     = Define[PoolImportData](KindPoolImport)
	PoolForget     = Define[PoolForgetData](KindPoolForget)
	Datasets       = Define[DatasetsData](KindDatasets)
	Snapshots      = Define[SnapshotsData](KindSnapshots)
	KernelLog      = Define[KernelLogData](KindKernelLog)
	Disks          = Define[DisksData](KindDisks)
	DiskForget     = Define[DiskForgetData](KindDiskForget)
	ZFSVersion     = Define[ZFSVersionData](KindZFSVersion)
	Smart          = Define[smart.Report](KindSmart, PerTarget())
	ARC            = Define[zfs.ARC](KindARC)
	CollectorError = Define[CollectorErrorData](KindCollectorError)
	Maintenance    = Define[maintenance.Event](KindMaintenance)
	Heartbeat      = Define[HeartbeatData](KindHeartbeat)
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

// KindOfSubject returns the host token and the kind of a fact's subject,
// e.g. "nas1" and "smart" for zwatch.v1.nas1.smart.WD-123; ok is false for
// a subject that carries no kind of fact.
func KindOfSubject(subject string) (host, kind string, ok bool) {
	subject = bus.Canonical(subject)
	host, ok = bus.HostOf(subject)
	if !ok {
		return "", "", false
	}
	rest := subject[len("zwatch."+bus.Version+".")+len(host)+1:]
	for _, k := range Kinds() {
		if rest == k.Name() || (k.PerTarget() && strings.HasPrefix(rest, k.Name()+".")) {
			return host, k.Name(), true
		}
	}
	return host, "", false
}

// KindOfSchema returns the kind named by an envelope's schema, e.g. "smart"
// for zwatch.v1.smart; ok is false for a schema of another version or
// namespace.
func KindOfSchema(schema string) (kind string, ok bool) {
	return strings.CutPrefix(schema, "zwatch."+bus.Version+".")
}
