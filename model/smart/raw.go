package smart

// The raw* types mirror the parts of smartctl's JSON output (smartmontools
// 7.x, json_format_version 1) that zwatch reads. Every optional value is a
// pointer so "absent" and "zero" stay distinct; unknown keys are ignored.

type rawOutput struct {
	Smartctl *rawSmartctl `json:"smartctl"`
	Device   *rawDevice   `json:"device"`

	ModelName     string `json:"model_name"`
	ScsiModelName string `json:"scsi_model_name"`
	ScsiVendor    string `json:"scsi_vendor"`
	ScsiProduct   string `json:"scsi_product"`
	Vendor        string `json:"vendor"`  // smartctl < 7.3 SCSI naming
	Product       string `json:"product"` // smartctl < 7.3 SCSI naming
	SerialNumber  string `json:"serial_number"`
	Firmware      string `json:"firmware_version"`
	ScsiRevision  string `json:"scsi_revision"`
	Revision      string `json:"revision"` // smartctl < 7.3 SCSI naming
	LogicalUnitID string `json:"logical_unit_id"`

	WWN           *rawWWN           `json:"wwn"`
	NVMeNamespace []rawNVMeNS       `json:"nvme_namespaces"`
	ScsiTransport *rawNamed         `json:"scsi_transport_protocol"`
	UserCapacity  *rawCapacity      `json:"user_capacity"`
	LogicalBlock  *int              `json:"logical_block_size"`
	PhysicalBlock *int              `json:"physical_block_size"`
	RotationRate  *int              `json:"rotation_rate"`
	SmartStatus   *rawSmartStatus   `json:"smart_status"`
	Temperature   *rawTemperature   `json:"temperature"`
	NVMeTempThr   *rawNVMeTempThr   `json:"nvme_composite_temperature_threshold"`
	PowerOnTime   *rawPowerOnTime   `json:"power_on_time"`
	PowerCycles   *uint64           `json:"power_cycle_count"`
	ATAAttributes *rawATAAttributes `json:"ata_smart_attributes"`
	ATAErrorLog   *rawATAErrorLog   `json:"ata_smart_error_log"`
	ATASelfTests  *rawATASelfTests  `json:"ata_smart_self_test_log"`
	NVMeHealth    *rawNVMeHealth    `json:"nvme_smart_health_information_log"`
	NVMeSelfTests *rawNVMeSelfTests `json:"nvme_self_test_log"`
	GrownDefects  *uint64           `json:"scsi_grown_defect_list"`
	ScsiErrors    *rawScsiErrorLog  `json:"scsi_error_counter_log"`
	ScsiSelfTest0 *rawScsiSelfTest  `json:"scsi_self_test_0"`
}

type rawSmartctl struct {
	ExitStatus *int         `json:"exit_status"`
	Messages   []rawMessage `json:"messages"`
}

type rawMessage struct {
	String   string `json:"string"`
	Severity string `json:"severity"`
}

type rawDevice struct {
	Name     string `json:"name"`
	InfoName string `json:"info_name"`
	Type     string `json:"type"`
	Protocol string `json:"protocol"`
}

type rawWWN struct {
	NAA *uint64 `json:"naa"`
	OUI *uint64 `json:"oui"`
	ID  *uint64 `json:"id"`
}

type rawNVMeNS struct {
	EUI64 *struct {
		OUI   *uint64 `json:"oui"`
		ExtID *uint64 `json:"ext_id"`
	} `json:"eui64"`
}

type rawNamed struct {
	Name string `json:"name"`
}

type rawCapacity struct {
	Bytes *uint64 `json:"bytes"`
}

type rawSmartStatus struct {
	Passed *bool `json:"passed"`
}

type rawTemperature struct {
	Current          *int `json:"current"`
	DriveTrip        *int `json:"drive_trip"`         // SCSI
	OpLimitMax       *int `json:"op_limit_max"`       // ATA SCT, NVMe (7.3+)
	CriticalLimitMax *int `json:"critical_limit_max"` // NVMe (7.3+)
	LimitMax         *int `json:"limit_max"`          // ATA SCT absolute limit
}

type rawNVMeTempThr struct {
	Warning  *int `json:"warning"`
	Critical *int `json:"critical"`
}

type rawPowerOnTime struct {
	Hours *uint64 `json:"hours"`
}

type rawATAAttributes struct {
	Table []rawATAAttribute `json:"table"`
}

type rawATAAttribute struct {
	ID         *int    `json:"id"`
	Name       string  `json:"name"`
	Value      *int    `json:"value"`
	Worst      *int    `json:"worst"`
	Thresh     *int    `json:"thresh"` // absent on many SSD attributes
	WhenFailed *string `json:"when_failed"`
	Raw        *struct {
		Value  *uint64 `json:"value"`
		String string  `json:"string"`
	} `json:"raw"`
}

type rawATAErrorLog struct {
	Summary  *rawCount `json:"summary"`
	Extended *rawCount `json:"extended"` // smartctl -x
}

type rawCount struct {
	Count *uint64 `json:"count"`
}

type rawATASelfTests struct {
	Standard *rawATASelfTestLog `json:"standard"`
	Extended *rawATASelfTestLog `json:"extended"` // smartctl -x
}

type rawATASelfTestLog struct {
	Table []rawATASelfTest `json:"table"`
}

type rawATASelfTest struct {
	Type          *rawValueString `json:"type"`
	Status        *rawValueString `json:"status"`
	LifetimeHours *uint64         `json:"lifetime_hours"`
}

type rawValueString struct {
	Value  *int   `json:"value"`
	String string `json:"string"`
	Passed *bool  `json:"passed"`
}

type rawNVMeHealth struct {
	CriticalWarning         *uint64 `json:"critical_warning"`
	Temperature             *int    `json:"temperature"`
	AvailableSpare          *uint64 `json:"available_spare"`
	AvailableSpareThreshold *uint64 `json:"available_spare_threshold"`
	PercentageUsed          *uint64 `json:"percentage_used"`
	PowerCycles             *uint64 `json:"power_cycles"`
	PowerOnHours            *uint64 `json:"power_on_hours"`
	UnsafeShutdowns         *uint64 `json:"unsafe_shutdowns"`
	MediaErrors             *uint64 `json:"media_errors"`
	NumErrLogEntries        *uint64 `json:"num_err_log_entries"`
}

type rawNVMeSelfTests struct {
	Table []rawNVMeSelfTest `json:"table"`
}

type rawNVMeSelfTest struct {
	Code         *rawValueString `json:"self_test_code"`
	Result       *rawValueString `json:"self_test_result"`
	PowerOnHours *uint64         `json:"power_on_hours"`
}

type rawScsiErrorLog struct {
	Read   *rawScsiCounters `json:"read"`
	Write  *rawScsiCounters `json:"write"`
	Verify *rawScsiCounters `json:"verify"`
}

type rawScsiCounters struct {
	TotalUncorrected *uint64 `json:"total_uncorrected_errors"`
}

type rawScsiSelfTest struct {
	Code        *rawValueString `json:"code"`
	Result      *rawValueString `json:"result"`
	PowerOnTime *struct {
		Hours *uint64 `json:"hours"`
	} `json:"power_on_time"`
}
