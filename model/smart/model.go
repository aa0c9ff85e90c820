// Package smart reads SMART data through smartctl's JSON output
// (smartmontools 7.x) for SATA, SAS, NVMe and USB-bridged disks.
package smart

// Report is one disk's SMART reading; its JSON form is documented in
// docs/smart-schema.md and is the payload of zwatch.v1.<host>.smart.<serial>.
type Report struct {
	Device    string `json:"device"`
	Model     string `json:"model"`
	Serial    string `json:"serial"`
	WWN       string `json:"wwn"`
	Firmware  string `json:"firmware,omitempty"`
	Transport string `json:"transport"`
	// SmartPassed is nil when the overall health is unknown.
	SmartPassed    *bool       `json:"smart_passed"`
	TemperatureC   *int        `json:"temperature_c"`
	PowerOnHours   *uint64     `json:"power_on_hours"`
	PowerCycles    *uint64     `json:"power_cycles,omitempty"`
	SizeBytes      uint64      `json:"size_bytes,omitempty"`
	RotationRPM    *int        `json:"rotation_rpm,omitempty"`
	LogicalSector  int         `json:"logical_sector_size,omitempty"`
	PhysicalSector int         `json:"physical_sector_size,omitempty"`
	Attributes     []Attribute `json:"attributes"`
	ATAErrorCount  *uint64     `json:"ata_error_count,omitempty"`
	NVMe           *NVMe       `json:"nvme"`
	SCSI           *SCSI       `json:"scsi,omitempty"`
	// Thresholds from the drive itself, where it reports them.
	TempWarnC  *int       `json:"temperature_warning_c,omitempty"`
	TempCritC  *int       `json:"temperature_critical_c,omitempty"`
	SelfTest   *SelfTest  `json:"last_self_test,omitempty"`
	ExitStatus ExitStatus `json:"exit_status"`
	Errors     []string   `json:"errors"`
	InStandby  bool       `json:"in_standby,omitempty"`

	// Fields added for the SMART collector (disk identity and standby age).

	// ByID is the disk's preferred /dev/disk/by-id path, from disk.Identity.
	ByID string `json:"by_id,omitempty"`
	// Kernel is the current kernel name (sdc, nvme0n1); it can change at boot.
	Kernel string `json:"kernel,omitempty"`
	// SmartType is smartctl's device type (device.type: sat, nvme, scsi,
	// usbjmicron, megaraid,N), the value to pass back with -d.
	SmartType string `json:"smart_type,omitempty"`
	// LastReadingAgeS is, for a disk in standby, how many seconds ago the
	// last full reading was taken; nil when there has been none.
	LastReadingAgeS *int64 `json:"last_reading_age_s,omitempty"`
}

// Attribute is one ATA SMART attribute.
type Attribute struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	Value      int    `json:"value"`
	Worst      int    `json:"worst"`
	Thresh     int    `json:"thresh"`
	Raw        uint64 `json:"raw"`
	RawString  string `json:"raw_string,omitempty"`
	WhenFailed string `json:"when_failed"`
}

// NVMe is the NVMe SMART/health log.
type NVMe struct {
	CriticalWarning         uint64   `json:"critical_warning"`
	CriticalWarningBits     []string `json:"critical_warning_bits,omitempty"`
	AvailableSpare          uint64   `json:"available_spare"`
	AvailableSpareThreshold uint64   `json:"available_spare_threshold"`
	PercentageUsed          uint64   `json:"percentage_used"`
	MediaErrors             uint64   `json:"media_errors"`
	NumErrLogEntries        uint64   `json:"num_err_log_entries"`
	UnsafeShutdowns         uint64   `json:"unsafe_shutdowns"`
}

// SCSI holds SAS/SCSI health counters.
type SCSI struct {
	GrownDefects      *uint64 `json:"grown_defect_list,omitempty"`
	ReadUncorrected   *uint64 `json:"read_uncorrected,omitempty"`
	WriteUncorrected  *uint64 `json:"write_uncorrected,omitempty"`
	VerifyUncorrected *uint64 `json:"verify_uncorrected,omitempty"`
}

// SelfTest is the newest self-test log entry.
type SelfTest struct {
	Type          string `json:"type"`
	Passed        bool   `json:"passed"`
	Status        string `json:"status"`
	LifetimeHours uint64 `json:"lifetime_hours,omitempty"`
}

// ExitStatus decodes smartctl's exit-status bit mask.
type ExitStatus struct {
	Code int      `json:"code"`
	Bits []string `json:"bits"`
}
