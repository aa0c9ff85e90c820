package rules

import "github.com/zwatch/zwatch/notifiers/delivery"

// Alert names: the alertname label, and the keys of rules.for and
// rules.disabled. Each is declared with its defaults by its rule's file and
// listed in Catalogue().
const (
	namePoolState              = "PoolState"
	namePoolStatusMessage      = "PoolStatusMessage"
	nameVdevState              = "VdevState"
	nameRedundancy             = "RedundancyMargin"
	nameVdevErrors             = "VdevErrors"
	nameVdevErrorRate          = "VdevErrorRate"
	namePoolDataErrors         = "PoolDataErrors"
	nameSlowIO                 = "SlowIO"
	nameIOHung                 = "IOHung"
	namePoolCapacity           = "PoolCapacity"
	nameDatasetQuota           = "DatasetQuota"
	nameDatasetLocked          = "DatasetLocked"
	nameDatasetNotMounted      = "DatasetNotMounted"
	nameKeyFileProblem         = "KeyFileProblem"
	namePoolMissing            = "PoolMissing"
	nameSnapshotStale          = "SnapshotStale"
	nameSnapshotCount          = "SnapshotCount"
	nameSnapshotSpace          = "SnapshotSpace"
	nameReplicationStale       = "ReplicationStale"
	nameReplicationInterrupted = "ReplicationInterrupted"
	namePoolFullForecast       = "PoolFullForecast"
	nameScrubNever             = "ScrubNever"
	nameScrubOverdue           = "ScrubOverdue"
	nameScrubErrors            = "ScrubErrors"
	nameScrubPaused            = "ScrubPaused"
	nameResilver               = "Resilver"
	nameResilverAtRisk         = "ResilverAtRisk"
	nameSmartFailed            = "SmartFailed"
	nameSmartAttribute         = "SmartAttribute"
	nameSmartCRC               = "SmartCRC"
	nameSmartTemperature       = "SmartTemperature"
	nameSmartSelfTest          = "SmartSelfTest"
	nameSCSIGrownDefects       = "SCSIGrownDefects"
	nameNVMeCriticalWarning    = "NVMeCriticalWarning"
	nameNVMeMediaErrors        = "NVMeMediaErrors"
	nameNVMeSpare              = "NVMeSpare"
	nameNVMeWearout            = "NVMeWearout"
	nameDiskIncident           = "DiskIncident"
	nameARCThrottle            = "ARCThrottle"
	nameARCHitRatio            = "ARCHitRatio"
	nameCollectorStale         = "CollectorStale"
	nameHostSilent             = "HostSilent"
	nameCommandHangs           = "CommandHangs"
	nameBlindSpot              = "MonitoringBlindSpot"
	nameDiskVanished           = "DiskVanished"
	nameZFSVersionMismatch     = "ZFSVersionMismatch"
	// The kernel log.
	nameKernelDiskErrors = "KernelDiskErrors"
	nameLinkResets       = "LinkResets"
)

// Alerts about zwatch's own state storage. The storage watch raises them
// (notifiers/delivery), not a rule of the catalogue: they must reach the
// person when the outbox and the rule state cannot be written, so they are
// delivered directly to the channels (docs/rules.md, "zwatch's own storage").
const (
	// NameStateStorageFull: the state directory's filesystem is full.
	NameStateStorageFull = delivery.NameStateStorageFull
	// NameStateStorageFailed: the state store refuses writes, or a damaged
	// stream or consumer was found (and repaired, with what was lost).
	NameStateStorageFailed = delivery.NameStateStorageFailed
)

// IsPoolStateAlert reports whether name says what state a pool as a whole
// is in; a summary of many alerts names these first (`zwatch check`).
func IsPoolStateAlert(name string) bool {
	return name == namePoolState || name == namePoolSuspended || name == namePoolMissing
}
