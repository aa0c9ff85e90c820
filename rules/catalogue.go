package rules

// Catalogue lists every rule the engine runs. A rule is one file
// (rules/rule_*.go) declaring its Rule, plus its line here. The order is
// the order of the alert names in config errors and docs/rules.md, and the
// order in which the rules of one scope run.
func Catalogue() []Rule {
	return []Rule{
		poolStateRule(),
		poolSuspendedRule(),
		poolMissingRule(),
		diskVanishedRule(),
		zfsVersionMismatchRule(),
		poolStatusMessageRule(),
		vdevStateRule(),
		redundancyRule(),
		vdevErrorsRule(),
		poolDataErrorsRule(),
		slowIORule(),
		ioHungRule(),
		poolCapacityRule(),
		datasetQuotaRule(),
		fullForecastRule(),
		datasetLockedRule(),
		datasetNotMountedRule(),
		keyFileProblemRule(),
		snapshotStaleRule(),
		snapshotCountRule(),
		snapshotSpaceRule(),
		replicationStaleRule(),
		replicationInterruptedRule(),
		scrubRule(),
		resilverRule(),
		resilverAtRiskRule(),
		smartHealthRule(),
		smartAttributesRule(),
		smartCRCRule(),
		smartTemperatureRule(),
		smartSelfTestRule(),
		scsiDefectsRule(),
		nvmeRule(),
		kernelDiskErrorsRule(),
		linkResetsRule(),
		diskIncidentRule(),
		arcThrottleRule(),
		arcHitRatioRule(),
		collectorStaleRule(),
		hostSilentRule(),
		commandHangsRule(),
		blindSpotRule(),
	}
}
