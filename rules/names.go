package rules

import "time"

// Alert names: the alertname label, and the keys of rules.for and
// rules.disabled (config.KnownRules lists the same names).
const (
	namePoolState           = "PoolState"
	namePoolStatusMessage   = "PoolStatusMessage"
	nameVdevState           = "VdevState"
	nameRedundancy          = "RedundancyMargin"
	nameVdevErrors          = "VdevErrors"
	nameVdevErrorRate       = "VdevErrorRate"
	namePoolDataErrors      = "PoolDataErrors"
	namePoolCapacity        = "PoolCapacity"
	nameDatasetQuota        = "DatasetQuota"
	namePoolFullForecast    = "PoolFullForecast"
	nameScrubNever          = "ScrubNever"
	nameScrubOverdue        = "ScrubOverdue"
	nameScrubErrors         = "ScrubErrors"
	nameScrubPaused         = "ScrubPaused"
	nameResilver            = "Resilver"
	nameResilverAtRisk      = "ResilverAtRisk"
	nameSmartFailed         = "SmartFailed"
	nameSmartAttribute      = "SmartAttribute"
	nameSmartCRC            = "SmartCRC"
	nameSmartTemperature    = "SmartTemperature"
	nameSmartSelfTest       = "SmartSelfTest"
	nameSCSIGrownDefects    = "SCSIGrownDefects"
	nameNVMeCriticalWarning = "NVMeCriticalWarning"
	nameNVMeMediaErrors     = "NVMeMediaErrors"
	nameNVMeSpare           = "NVMeSpare"
	nameNVMeWearout         = "NVMeWearout"
	nameDiskIncident        = "DiskIncident"
	nameARCThrottle         = "ARCThrottle"
	nameARCHitRatio         = "ARCHitRatio"
	nameCollectorStale      = "CollectorStale"
	nameHostSilent          = "HostSilent"
	nameCommandHangs        = "CommandHangs"
	nameBlindSpot           = "MonitoringBlindSpot"
)

// allRules lists every alert name, for tests against config.KnownRules.
func allRules() []string {
	return []string{
		namePoolState, namePoolStatusMessage, nameVdevState, nameRedundancy,
		nameVdevErrors, nameVdevErrorRate, namePoolDataErrors,
		namePoolCapacity, nameDatasetQuota, namePoolFullForecast,
		nameScrubNever, nameScrubOverdue, nameScrubErrors, nameScrubPaused,
		nameResilver, nameResilverAtRisk,
		nameSmartFailed, nameSmartAttribute, nameSmartCRC, nameSmartTemperature,
		nameSmartSelfTest, nameSCSIGrownDefects, nameNVMeCriticalWarning,
		nameNVMeMediaErrors, nameNVMeSpare, nameNVMeWearout,
		nameDiskIncident,
		nameARCThrottle, nameARCHitRatio,
		nameCollectorStale, nameHostSilent, nameCommandHangs, nameBlindSpot,
	}
}

// defaultFor is each rule's pending duration unless rules.for overrides it.
// Facts that are already settled when reported (a FAULTED disk, a failed
// SMART check) fire at once; readings that wobble wait.
func defaultFor(name string) time.Duration {
	switch name {
	case namePoolCapacity, nameDatasetQuota:
		return 5 * time.Minute
	case namePoolFullForecast:
		return time.Hour
	case nameSmartTemperature:
		return 10 * time.Minute
	case nameARCHitRatio:
		return 30 * time.Minute
	case nameScrubNever:
		return 24 * time.Hour
	case nameCollectorStale:
		// zpool list waits while zpool create or import holds the pool
		// lock: a collector a few intervals late is not news, one silent
		// for another minute is (seen on real OpenZFS in make e2e).
		return time.Minute
	}
	return 0
}

// Names lists every alert name the engine can raise, in catalogue order.
func Names() []string { return allRules() }
