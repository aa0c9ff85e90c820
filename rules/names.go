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
var allRules = []string{
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

// defaultFor is each rule's pending duration unless rules.for overrides it.
// Facts that are already settled when reported (a FAULTED disk, a failed
// SMART check) fire at once; readings that wobble wait.
var defaultFor = map[string]time.Duration{
	namePoolCapacity:     5 * time.Minute,
	nameDatasetQuota:     5 * time.Minute,
	namePoolFullForecast: time.Hour,
	nameSmartTemperature: 10 * time.Minute,
	nameARCHitRatio:      30 * time.Minute,
	nameScrubNever:       24 * time.Hour,
}
