package metrics

import "github.com/prometheus/client_golang/prometheus"

// descs are the descriptions of every metric the view collector sends,
// built once per Handler.
type descs struct {
	scrapeError, scrapeDuration *prometheus.Desc

	hostInfo, hostHeartbeat, hostSilent *prometheus.Desc

	poolHealth, poolState, poolAlloc, poolSize, poolFree, poolCapacity   *prometheus.Desc
	poolFragmentation, poolReadOnly, poolDataErrors, poolMargin          *prometheus.Desc
	poolStatusAt, poolCapacityAt, poolLastScrub                          *prometheus.Desc
	scrubErrors, scrubRepaired, scrubScanned, scrubIssued, scrubRate     *prometheus.Desc
	scrubLastCompleted, scanInfo, scanProgress, scanTotal, scanETA       *prometheus.Desc
	vdevHealth, vdevRead, vdevWrite, vdevChecksum, vdevSlow, vdevLeaf    *prometheus.Desc
	smartDevice, smartStatus, smartTemp, smartAttr, smartPowerOn         *prometheus.Desc
	smartExit, smartCapacity, smartRotation, smartUsed, smartSpare       *prometheus.Desc
	smartSpareThresh, smartCritWarn, smartMediaErr, smartErrLog          *prometheus.Desc
	scsiGrownDefects, scsiReadUncorrected, scsiWriteUncorrected          *prometheus.Desc
	diskInfo, diskSmartAt, diskPowerCycles, diskProblem                  *prometheus.Desc
	arcSize, arcTarget, arcMin, arcMax, arcL2Size                        *prometheus.Desc
	arcHits, arcMisses, arcDemandDataHits, arcDemandDataMisses           *prometheus.Desc
	arcDemandMetaHits, arcDemandMetaMisses, arcPrefetchHits, arcPrefMiss *prometheus.Desc
	arcL2Hits, arcL2Misses, arcThrottle, arcAt                           *prometheus.Desc
	alerts, alertsAcked                                                  *prometheus.Desc
	outboxBacklog, outboxDead, outboxAckFloor                            *prometheus.Desc
	collInterval, collLastOK, collUp, collDisabled, collDuration         *prometheus.Desc
	collRuns, collErrors                                                 *prometheus.Desc
}

func newDescs() *descs {
	// Every metric about a host's state carries "host", so a fleet
	// server's one scrape shows every host apart.
	poolLabels := []string{"host", "pool"}
	vdevLabels := []string{"host", "pool", "vdev", "class", "type"}
	diskLabels := []string{"host", "device"}
	collLabels := []string{"host", "collector"}
	outboxLabel := []string{"host", "channel", "type"}
	// smartctl_exporter's smartctl_device labels, in its order, after host.
	smartctlDeviceLabels := []string{
		"host", "device", "interface", "protocol", "model_family", "model_name",
		"serial_number", "ata_additional_product_id", "firmware_version",
		"ata_version", "sata_version", "form_factor", "scsi_vendor", "scsi_product",
		"scsi_revision", "scsi_version",
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	with := func(base []string, more ...string) []string {
		return append(append([]string{}, base...), more...)
	}
	return &descs{
		scrapeError:    d("zwatch_scrape_error", "1 when this scrape could not read a part of zwatch's view from the bus (its metrics are then left out), 0 when it could.", "part"),
		scrapeDuration: d("zwatch_scrape_duration_seconds", "How long reading zwatch's view from the bus took for this scrape."),

		hostInfo:      d("zwatch_host_info", "A host on the bus, with the zwatch version its last heartbeat reported.", "host", "version"),
		hostHeartbeat: d("zwatch_host_last_heartbeat_timestamp_seconds", "When the host's last heartbeat was collected, in Unix seconds.", "host"),
		hostSilent:    d("zwatch_host_silent", "1 when the host has sent no heartbeat for longer than rules.watcher.silent_after.", "host"),

		poolHealth:        d("zfs_pool_health", "Health status code for the pool [0: ONLINE, 1: DEGRADED, 2: FAULTED, 3: OFFLINE, 4: UNAVAIL, 5: REMOVED, 6: SUSPENDED] (zfs_exporter's encoding).", poolLabels...),
		poolState:         d("zwatch_pool_state", "1 for the pool's current state, 0 for the others (node_exporter's node_zfs_zpool_state encoding).", with(poolLabels, "state")...),
		poolAlloc:         d("zfs_pool_allocated_bytes", "Amount of storage in bytes used within the pool.", poolLabels...),
		poolSize:          d("zfs_pool_size_bytes", "Total size in bytes of the storage pool.", poolLabels...),
		poolFree:          d("zfs_pool_free_bytes", "The amount of free space in bytes available in the pool.", poolLabels...),
		poolCapacity:      d("zfs_pool_capacity_ratio", "Ratio of pool space used.", poolLabels...),
		poolFragmentation: d("zfs_pool_fragmentation_ratio", "The fragmentation ratio of the pool.", poolLabels...),
		poolReadOnly:      d("zfs_pool_readonly", "Read-only status of the pool [0: read-write, 1: read-only].", poolLabels...),
		poolDataErrors:    d("zwatch_pool_data_errors", "Files with permanent errors zpool status lists for the pool (errors: section).", poolLabels...),
		poolMargin:        d("zwatch_pool_redundancy_margin", "How many more disks the pool survives losing: the least over its data, special, dedup and log vdevs (negative: data is lost).", poolLabels...),
		poolStatusAt:      d("zwatch_pool_status_timestamp_seconds", "When the pool's zpool status was collected, in Unix seconds.", poolLabels...),
		poolCapacityAt:    d("zwatch_pool_capacity_timestamp_seconds", "When the pool's zpool list was collected, in Unix seconds.", poolLabels...),
		poolLastScrub:     d("zwatch_pool_last_scrub_timestamp_seconds", "When the pool's last scrub (not resilver) ended, in Unix seconds; absent when none is recorded.", poolLabels...),

		scrubErrors:        d("zfs_pool_scrub_errors", "Number of errors detected during the most recent scrub or resilver.", poolLabels...),
		scrubRepaired:      d("zfs_pool_scrub_repaired_bytes", "Bytes repaired during the most recent scrub or resilver.", poolLabels...),
		scrubScanned:       d("zfs_pool_scrub_scanned_bytes", "Bytes read so far by the in-progress scrub or resilver, 0 if no scan is running.", poolLabels...),
		scrubIssued:        d("zfs_pool_scrub_issued_bytes", "Bytes verified so far by the in-progress scrub or resilver, 0 if no scan is running.", poolLabels...),
		scrubRate:          d("zfs_pool_scrub_rate_bytes_per_second", "Current scan rate of the in-progress scrub or resilver, 0 if no scan is running.", poolLabels...),
		scrubLastCompleted: d("zfs_pool_scrub_last_completed_timestamp_seconds", "Unix timestamp of the most recently completed scrub or resilver, or 0 if none.", poolLabels...),
		scanInfo:           d("zwatch_pool_scan_info", "The pool's last or current scan: function (scrub, resilver, errorscrub, none) and state (scanning, finished, canceled, paused, none).", with(poolLabels, "function", "state")...),
		scanProgress:       d("zwatch_pool_scan_progress_ratio", "How far the in-progress scrub or resilver is, 0 to 1; absent when none runs.", with(poolLabels, "function")...),
		scanTotal:          d("zwatch_pool_scan_total_bytes", "Bytes the in-progress scrub or resilver has to examine; absent when none runs.", with(poolLabels, "function")...),
		scanETA:            d("zwatch_pool_scan_eta_seconds", "zpool status's estimate of the time left for the in-progress scrub or resilver; absent when it gives none.", with(poolLabels, "function")...),

		vdevHealth:   d("zwatch_vdev_health", "State code of a vdev [0: ONLINE, 1: DEGRADED, 2: FAULTED, 3: OFFLINE, 4: UNAVAIL, 5: REMOVED, 6: SUSPENDED, 7: AVAIL (spare), 8: INUSE (spare), 9: other].", vdevLabels...),
		vdevRead:     d("zwatch_vdev_read_errors", "Read errors zpool status counts for the vdev since the last zpool clear or import.", vdevLabels...),
		vdevWrite:    d("zwatch_vdev_write_errors", "Write errors zpool status counts for the vdev since the last zpool clear or import.", vdevLabels...),
		vdevChecksum: d("zwatch_vdev_checksum_errors", "Checksum errors zpool status counts for the vdev since the last zpool clear or import.", vdevLabels...),
		vdevSlow:     d("zwatch_vdev_slow_ios", "Slow I/Os zpool status -s counts for the vdev; absent when not reported.", vdevLabels...),
		vdevLeaf:     d("zwatch_vdev_disk_info", "A leaf vdev's disk as zwatch knows it: serial, by-id name and bay hint.", with(vdevLabels, "serial", "by_id", "bay")...),

		smartDevice:      d("smartctl_device", "Device info", smartctlDeviceLabels...),
		smartStatus:      d("smartctl_device_smart_status", "General smart status", diskLabels...),
		smartTemp:        d("smartctl_device_temperature", "Device temperature celsius", with(diskLabels, "temperature_type")...),
		smartAttr:        d("smartctl_device_attribute", "Device attributes", with(diskLabels, "attribute_name", "attribute_flags_short", "attribute_flags_long", "attribute_value_type", "attribute_id")...),
		smartPowerOn:     d("smartctl_device_power_on_seconds", "Device power on seconds", diskLabels...),
		smartExit:        d("smartctl_device_smartctl_exit_status", "Exit status of smartctl on device", diskLabels...),
		smartCapacity:    d("smartctl_device_capacity_bytes", "Device capacity in bytes", diskLabels...),
		smartRotation:    d("smartctl_device_rotation_rate", "Device rotation rate", diskLabels...),
		smartUsed:        d("smartctl_device_percentage_used", "Device write percentage used", diskLabels...),
		smartSpare:       d("smartctl_device_available_spare", "Normalized percentage (0 to 100%) of the remaining spare capacity available", diskLabels...),
		smartSpareThresh: d("smartctl_device_available_spare_threshold", "When the Available Spare falls below the threshold indicated in this field, an asynchronous event completion may occur. The value is indicated as a normalized percentage (0 to 100%)", diskLabels...),
		smartCritWarn:    d("smartctl_device_critical_warning", "This field indicates critical warnings for the state of the controller", diskLabels...),
		smartMediaErr:    d("smartctl_device_media_errors", "Contains the number of occurrences where the controller detected an unrecovered data integrity error. Errors such as uncorrectable ECC, CRC checksum failure, or LBA tag mismatch are included in this field", diskLabels...),
		smartErrLog:      d("smartctl_device_num_err_log_entries", "Contains the number of Error Information log entries over the life of the controller", diskLabels...),

		scsiGrownDefects:     d("smartctl_scsi_grown_defect_list", "Device SCSI grown defect list counter", diskLabels...),
		scsiReadUncorrected:  d("smartctl_read_total_uncorrected_errors", "Read Total Uncorrected Errors", diskLabels...),
		scsiWriteUncorrected: d("smartctl_write_total_uncorrected_errors", "Write Total Uncorrected Errors", diskLabels...),

		diskInfo:        d("zwatch_disk_info", "A physical disk: its serial, by-id name, bay hint and where it sits in a pool.", "host", "device", "serial", "model", "by_id", "bay", "transport", "pool", "vdev", "health"),
		diskSmartAt:     d("zwatch_disk_smart_timestamp_seconds", "When the disk's last SMART reading was collected, in Unix seconds.", diskLabels...),
		diskPowerCycles: d("zwatch_disk_power_cycles", "Power cycles the disk reports (smartctl_exporter's smartctl_device_power_cycle_count, renamed: a _count suffix is reserved for histograms).", diskLabels...),
		diskProblem:     d("zwatch_disk_problem", "1 when the disk's SMART health fails or an alert about it fires.", diskLabels...),

		arcSize:             d("zwatch_arc_size_bytes", "Current size of the ZFS ARC.", "host"),
		arcTarget:           d("zwatch_arc_target_size_bytes", "Target size of the ZFS ARC (c).", "host"),
		arcMin:              d("zwatch_arc_min_size_bytes", "Minimum size of the ZFS ARC (c_min).", "host"),
		arcMax:              d("zwatch_arc_max_size_bytes", "Maximum size of the ZFS ARC (c_max).", "host"),
		arcL2Size:           d("zwatch_arc_l2_size_bytes", "Size of the L2ARC.", "host"),
		arcHits:             d("zwatch_arc_hits_total", "ARC hits since the kernel module loaded.", "host"),
		arcMisses:           d("zwatch_arc_misses_total", "ARC misses since the kernel module loaded.", "host"),
		arcDemandDataHits:   d("zwatch_arc_demand_data_hits_total", "ARC demand data hits.", "host"),
		arcDemandDataMisses: d("zwatch_arc_demand_data_misses_total", "ARC demand data misses.", "host"),
		arcDemandMetaHits:   d("zwatch_arc_demand_metadata_hits_total", "ARC demand metadata hits.", "host"),
		arcDemandMetaMisses: d("zwatch_arc_demand_metadata_misses_total", "ARC demand metadata misses.", "host"),
		arcPrefetchHits:     d("zwatch_arc_prefetch_data_hits_total", "ARC prefetch data hits.", "host"),
		arcPrefMiss:         d("zwatch_arc_prefetch_data_misses_total", "ARC prefetch data misses.", "host"),
		arcL2Hits:           d("zwatch_arc_l2_hits_total", "L2ARC hits.", "host"),
		arcL2Misses:         d("zwatch_arc_l2_misses_total", "L2ARC misses.", "host"),
		arcThrottle:         d("zwatch_arc_memory_throttle_total", "Times the ARC throttled writes for lack of memory.", "host"),
		arcAt:               d("zwatch_arc_timestamp_seconds", "When the ARC statistics were collected, in Unix seconds.", "host"),

		alerts: d("zwatch_alerts", "Alerts zwatch's rules hold for the host, by name, severity and state (firing, pending).", "host", "alertname", "severity", "state"),
		alertsAcked: d("zwatch_alerts_acknowledged", "Firing alerts of the host that a person acknowledged (zwatch ack, a phone's answer): not repeated while the acknowledgement holds.",
			"host", "alertname", "severity"),

		outboxBacklog:  d("zwatch_outbox_backlog", "Notifications not yet delivered to the channel (waiting or being retried).", outboxLabel...),
		outboxDead:     d("zwatch_outbox_dead_letters", "Notifications the channel gave up on, still kept in the dead-letter stream.", outboxLabel...),
		outboxAckFloor: d("zwatch_outbox_ack_floor_sequence", "Outbox sequence up to which every notification is done for the channel.", outboxLabel...),

		collInterval: d("zwatch_collector_interval_seconds", "How often the collector runs (0: it follows a stream).", collLabels...),
		collLastOK:   d("zwatch_collector_last_success_timestamp_seconds", "When the collector last succeeded, in Unix seconds; absent when it never did.", collLabels...),
		collUp:       d("zwatch_collector_up", "1 when the collector's last run succeeded (a stream follower: while it runs without error), 0 when it failed, has not run yet or is disabled here.", collLabels...),
		collDisabled: d("zwatch_collector_disabled", "1 when the collector does not run here (its tool or source is missing, or it is switched off).", collLabels...),
		collDuration: d("zwatch_collector_last_duration_seconds", "How long the collector's last finished run took.", collLabels...),
		collRuns:     d("zwatch_collector_runs_total", "Finished runs of the collector since the daemon started.", collLabels...),
		collErrors:   d("zwatch_collector_errors_total", "Failed runs of the collector since the daemon started.", collLabels...),
	}
}
