// Package facts holds what collectors tell the rule engine: the kinds of
// fact, the subject each travels on, and the typed payload of each. It sits
// between collectors (which write facts) and rules (which read them), so that
// neither imports the other.
//
// Adding a kind of fact is one payload type and one line in Kinds.
package facts

import (
	"strings"

	"github.com/zwatch/zwatch/bus"
)

// Kinds of fact: the subject suffix under zwatch.v1.<host>. and the schema
// name (bus.Schema(kind)).
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

// Kind describes one kind of fact on the bus.
type Kind struct {
	// Name is the subject suffix and schema name, e.g. "zpool.status".
	Name string
	// PerTarget: the subject ends in one more token naming what the fact
	// is about (a disk serial), zwatch.v1.<host>.<name>.<target>.
	PerTarget bool
}

// Kinds lists every kind of fact, in the order docs/subjects.md presents them.
func Kinds() []Kind {
	return []Kind{
		{Name: KindZpoolCapacity},
		{Name: KindZpoolStatus},
		{Name: KindZpoolEvent},
		{Name: KindPoolKstat},
		{Name: KindPoolImport},
		{Name: KindPoolForget},
		{Name: KindDatasets},
		{Name: KindSnapshots},
		{Name: KindZFSVersion},
		{Name: KindKernelLog},
		{Name: KindDisks},
		{Name: KindDiskForget},
		{Name: KindSmart, PerTarget: true},
		{Name: KindARC},
		{Name: KindCollectorError},
		{Name: KindMaintenance},
		{Name: KindHeartbeat},
	}
}

// StreamSubjects are the subjects of the facts stream (bus.StreamFacts), for
// every host: one per kind, with a wildcard for a per-target kind.
func StreamSubjects() []string {
	kinds := Kinds()
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		s := "zwatch." + bus.Version + ".*." + k.Name
		if k.PerTarget {
			s += ".>"
		}
		out = append(out, s)
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
		if rest == k.Name || (k.PerTarget && strings.HasPrefix(rest, k.Name+".")) {
			return host, k.Name, true
		}
	}
	return host, "", false
}
