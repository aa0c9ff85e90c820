package smart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/zwatch/zwatch/internal/strutil"
)

// maxInput bounds what Parse reads: real outputs (smartctl -x of a disk
// with full logs) stay well under 1 MiB.
const maxInput = 8 << 20

// Errors Parse wraps, for callers that tell them apart.
var (
	ErrEmpty       = errors.New("empty smartctl output")
	ErrNotJSON     = errors.New("smartctl output is not JSON (was smartctl run with --json?)")
	ErrTruncated   = errors.New("smartctl JSON output is truncated")
	ErrNotSmartctl = errors.New("JSON is not smartctl output (no smartctl or device object)")
)

// Parse reads one `smartctl --json -a` document (smartmontools 7.x). A
// non-zero smartctl exit status is not an error here: the status is decoded
// into Report.ExitStatus and the messages into Report.Errors, and whatever
// data came back is kept. Parse fails only when the input is not a complete
// smartctl JSON document.
func Parse(r io.Reader) (*Report, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read smartctl output: %w", err)
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("smartctl output larger than %d bytes", maxInput)
	}
	raw, err := decode(data)
	if err != nil {
		return nil, err
	}
	return build(raw), nil
}

// decode checks the shape of the input before and after json decoding so
// the error says what was wrong: nothing, text, a cut-off document, or JSON
// from something else.
func decode(data []byte) (*rawOutput, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, ErrEmpty
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: starts with %q", ErrNotJSON, firstLine(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var raw rawOutput
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w after %d bytes", ErrTruncated, len(trimmed))
		}
		return nil, fmt.Errorf("decode smartctl JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode smartctl JSON: unexpected data after the document at byte %d", dec.InputOffset())
	}
	if raw.Smartctl == nil && raw.Device == nil {
		return nil, ErrNotSmartctl
	}
	return &raw, nil
}

// firstLine returns the start of s for error messages.
func firstLine(s []byte) string {
	if i := bytes.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return string(s)
}

func build(raw *rawOutput) *Report {
	rep := &Report{Attributes: []Attribute{}, Errors: []string{}}
	fillIdentity(rep, raw)
	fillHealth(rep, raw)
	rep.Attributes = attributes(raw.ATAAttributes)
	rep.ATAErrorCount = ataErrorCount(raw.ATAErrorLog)
	rep.NVMe = nvmeHealth(raw.NVMeHealth)
	rep.SCSI = scsiHealth(raw)
	rep.SelfTest = latestSelfTest(raw)
	fillExit(rep, raw.Smartctl)
	return rep
}

func fillIdentity(rep *Report, raw *rawOutput) {
	if raw.Device != nil {
		rep.Device = raw.Device.Name
		rep.SmartType = raw.Device.Type
	}
	rep.Model = modelName(raw)
	rep.Serial = strings.TrimSpace(raw.SerialNumber)
	rep.Firmware = strutil.FirstNonBlank(raw.Firmware, raw.ScsiRevision, raw.Revision)
	rep.WWN = wwnOf(raw)
	rep.Transport = transportOf(raw.Device, raw.ScsiTransport)
	if raw.UserCapacity != nil && raw.UserCapacity.Bytes != nil {
		rep.SizeBytes = *raw.UserCapacity.Bytes
	}
	rep.RotationRPM = raw.RotationRate
	if rep.RotationRPM == nil && rep.Transport == transportNVMe {
		rep.RotationRPM = intPtr(0) // NVMe is flash by definition
	}
	rep.LogicalSector = derefInt(raw.LogicalBlock)
	rep.PhysicalSector = derefInt(raw.PhysicalBlock)
}

// modelName covers ATA/NVMe (model_name), SCSI from 7.3 on (scsi_model_name,
// scsi_vendor + scsi_product) and older SCSI output (vendor + product).
func modelName(raw *rawOutput) string {
	return strutil.FirstNonBlank(
		raw.ModelName,
		raw.ScsiModelName,
		joinNonEmpty(raw.ScsiVendor, raw.ScsiProduct),
		joinNonEmpty(raw.Vendor, raw.Product),
	)
}

func fillHealth(rep *Report, raw *rawOutput) {
	if raw.SmartStatus != nil {
		rep.SmartPassed = raw.SmartStatus.Passed
	}
	nv := raw.NVMeHealth
	if raw.Temperature != nil {
		rep.TemperatureC = raw.Temperature.Current
	}
	if rep.TemperatureC == nil && nv != nil {
		rep.TemperatureC = nv.Temperature
	}
	rep.TempWarnC, rep.TempCritC = tempThresholds(raw.Temperature, raw.NVMeTempThr)
	if raw.PowerOnTime != nil {
		rep.PowerOnHours = raw.PowerOnTime.Hours
	}
	if rep.PowerOnHours == nil && nv != nil {
		rep.PowerOnHours = nv.PowerOnHours
	}
	rep.PowerCycles = raw.PowerCycles
	if rep.PowerCycles == nil && nv != nil {
		rep.PowerCycles = nv.PowerCycles
	}
}

// tempThresholds prefers the NVMe composite thresholds (WCTEMP/CCTEMP), then
// the temperature object's limits (ATA SCT, NVMe in 7.3+), then a SCSI
// drive's trip point as the critical limit.
func tempThresholds(t *rawTemperature, nv *rawNVMeTempThr) (warn, crit *int) {
	if nv != nil {
		warn, crit = nv.Warning, nv.Critical
	}
	if t == nil {
		return warn, crit
	}
	if warn == nil {
		warn = t.OpLimitMax
	}
	if crit == nil {
		crit = t.CriticalLimitMax
	}
	if crit == nil {
		crit = t.LimitMax
	}
	if crit == nil {
		crit = t.DriveTrip
	}
	return warn, crit
}

func attributes(a *rawATAAttributes) []Attribute {
	out := []Attribute{}
	if a == nil {
		return out
	}
	for _, ra := range a.Table {
		if ra.ID == nil {
			continue // not an attribute without its number
		}
		at := Attribute{
			ID:     *ra.ID,
			Name:   ra.Name,
			Value:  derefInt(ra.Value),
			Worst:  derefInt(ra.Worst),
			Thresh: derefInt(ra.Thresh),
		}
		if ra.WhenFailed != nil {
			at.WhenFailed = *ra.WhenFailed
		}
		if ra.Raw != nil {
			at.Raw = derefU64(ra.Raw.Value)
			at.RawString = ra.Raw.String
		}
		out = append(out, at)
	}
	return out
}

// ataErrorCount is the device's ATA error counter: the summary log's count
// (-a), else the extended log's (-x).
func ataErrorCount(l *rawATAErrorLog) *uint64 {
	if l == nil {
		return nil
	}
	if l.Summary != nil && l.Summary.Count != nil {
		return l.Summary.Count
	}
	if l.Extended != nil {
		return l.Extended.Count
	}
	return nil
}

func nvmeHealth(h *rawNVMeHealth) *NVMe {
	if h == nil {
		return nil
	}
	n := &NVMe{
		CriticalWarning:         derefU64(h.CriticalWarning),
		AvailableSpare:          derefU64(h.AvailableSpare),
		AvailableSpareThreshold: derefU64(h.AvailableSpareThreshold),
		PercentageUsed:          derefU64(h.PercentageUsed),
		MediaErrors:             derefU64(h.MediaErrors),
		NumErrLogEntries:        derefU64(h.NumErrLogEntries),
		UnsafeShutdowns:         derefU64(h.UnsafeShutdowns),
	}
	n.CriticalWarningBits = CriticalWarningBits(n.CriticalWarning)
	return n
}

// CriticalWarningBits names the bits set in the NVMe SMART/health log's
// Critical Warning byte (NVMe base specification, SMART / Health
// Information log page, byte 0). Reserved bits are named "bit6", "bit7".
func CriticalWarningBits(cw uint64) []string {
	names := [8]string{
		"spare_below_threshold",      // available spare below threshold
		"temperature",                // over or under a temperature threshold
		"reliability_degraded",       // media or internal errors degrade reliability
		"read_only",                  // media placed in read-only mode
		"volatile_backup_failed",     // volatile memory backup device failed
		"persistent_memory_readonly", // persistent memory region became read-only
		"bit6",
		"bit7",
	}
	var out []string
	for i, name := range names {
		if cw&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

func scsiHealth(raw *rawOutput) *SCSI {
	s := &SCSI{GrownDefects: raw.GrownDefects}
	if l := raw.ScsiErrors; l != nil {
		s.ReadUncorrected = uncorrected(l.Read)
		s.WriteUncorrected = uncorrected(l.Write)
		s.VerifyUncorrected = uncorrected(l.Verify)
	}
	if *s == (SCSI{}) {
		return nil
	}
	return s
}

func uncorrected(c *rawScsiCounters) *uint64 {
	if c == nil {
		return nil
	}
	return c.TotalUncorrected
}

// latestSelfTest returns the newest self-test entry; smartctl lists ATA and
// NVMe logs newest first and reports SCSI's newest as scsi_self_test_0.
func latestSelfTest(raw *rawOutput) *SelfTest {
	if st := ataSelfTest(raw.ATASelfTests); st != nil {
		return st
	}
	if st := nvmeSelfTest(raw.NVMeSelfTests); st != nil {
		return st
	}
	return scsiSelfTest(raw.ScsiSelfTest0)
}

func ataSelfTest(l *rawATASelfTests) *SelfTest {
	if l == nil {
		return nil
	}
	for _, log := range []*rawATASelfTestLog{l.Standard, l.Extended} {
		if log == nil || len(log.Table) == 0 {
			continue
		}
		e := log.Table[0]
		st := &SelfTest{LifetimeHours: derefU64(e.LifetimeHours)}
		if e.Type != nil {
			st.Type = e.Type.String
		}
		if e.Status != nil {
			st.Status = e.Status.String
			// smartctl sets passed only for finished tests; an aborted or
			// running test has none and is not a pass.
			st.Passed = e.Status.Passed != nil && *e.Status.Passed
		}
		return st
	}
	return nil
}

func nvmeSelfTest(l *rawNVMeSelfTests) *SelfTest {
	if l == nil || len(l.Table) == 0 {
		return nil
	}
	e := l.Table[0]
	st := &SelfTest{LifetimeHours: derefU64(e.PowerOnHours)}
	if e.Code != nil {
		st.Type = e.Code.String
	}
	if e.Result != nil {
		st.Status = e.Result.String
		st.Passed = e.Result.Value != nil && *e.Result.Value == 0
	}
	return st
}

func scsiSelfTest(e *rawScsiSelfTest) *SelfTest {
	if e == nil {
		return nil
	}
	st := &SelfTest{}
	if e.Code != nil {
		st.Type = e.Code.String
	}
	if e.Result != nil {
		st.Status = e.Result.String
		st.Passed = e.Result.Value != nil && *e.Result.Value == 0
	}
	if e.PowerOnTime != nil {
		st.LifetimeHours = derefU64(e.PowerOnTime.Hours)
	}
	return st
}

func fillExit(rep *Report, sc *rawSmartctl) {
	rep.ExitStatus = ExitStatus{Bits: []string{}}
	if sc == nil {
		return
	}
	if sc.ExitStatus != nil {
		rep.ExitStatus = ExitStatus{Code: *sc.ExitStatus, Bits: ExitBits(*sc.ExitStatus)}
	}
	for _, m := range sc.Messages {
		if s := strings.TrimSpace(m.String); s != "" {
			rep.Errors = append(rep.Errors, s)
		}
	}
	rep.InStandby = standbyMessage(rep.Errors)
}

// standbyMessage reports whether smartctl -n skipped the disk because of its
// power mode ("Device is in STANDBY mode, exit(2)", "… SLEEP mode …",
// "/dev/sda: Device is in STANDBY (OS) mode, exit(2)"). The exit code alone
// cannot tell: a failed open also exits 2.
func standbyMessage(msgs []string) bool {
	for _, m := range msgs {
		l := strings.ToLower(m)
		if strings.Contains(l, "device is in ") && strings.Contains(l, " mode") {
			return true
		}
	}
	return false
}
