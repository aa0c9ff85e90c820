package smart

// smartctl's exit status is a bit mask (smartctl(8), EXIT STATUS). Several
// bits can be set at once, and bits 3..7 come with full JSON output: a
// non-zero exit is a finding about the disk, not a failure to read it.

// Exit-status bit names, stable for rules and dashboards.
const (
	ExitCmdline         = "cmdline_parse"            // bit 0
	ExitOpenFailed      = "device_open_failed"       // bit 1
	ExitSmartCmdFailed  = "smart_command_failed"     // bit 2
	ExitDiskFailing     = "disk_failing"             // bit 3
	ExitPrefailBelow    = "prefail_below_threshold"  // bit 4
	ExitPastBelow       = "past_below_threshold"     // bit 5
	ExitErrorLog        = "error_log_has_errors"     // bit 6
	ExitSelfTestLogErrs = "self_test_log_has_errors" // bit 7
)

// exitBit pairs a bit's short name with smartctl(8)'s meaning.
type exitBit struct {
	name, meaning string
}

// exitBits is a function, not a package variable, so nothing can change it.
func exitBits() [8]exitBit {
	return [8]exitBit{
		{ExitCmdline, "command line did not parse"},
		{ExitOpenFailed, "device open failed, or device did not return an IDENTIFY DEVICE structure, or device is in a low-power mode"},
		{ExitSmartCmdFailed, "some SMART or other ATA command to the disk failed, or there was a checksum error in a SMART data structure"},
		{ExitDiskFailing, "SMART status check returned \"DISK FAILING\""},
		{ExitPrefailBelow, "some prefail attributes are at or below their threshold"},
		{ExitPastBelow, "some attributes have been at or below their threshold in the past, but not now"},
		{ExitErrorLog, "the device error log contains records of errors"},
		{ExitSelfTestLogErrs, "the device self-test log contains records of errors"},
	}
}

// ExitBits names every bit set in smartctl's exit status, lowest bit first.
// It returns an empty (non-nil) slice for 0 and for negative codes (a
// process killed by a signal); bits above 7 are not smartctl's and are
// ignored.
func ExitBits(code int) []string {
	names := []string{}
	if code <= 0 {
		return names
	}
	for i, b := range exitBits() {
		if code&(1<<i) != 0 {
			names = append(names, b.name)
		}
	}
	return names
}

// ExitBitMeaning returns smartctl(8)'s description of a bit named by
// ExitBits, or "" for an unknown name.
func ExitBitMeaning(name string) string {
	for _, b := range exitBits() {
		if b.name == name {
			return b.meaning
		}
	}
	return ""
}
