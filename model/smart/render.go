package smart

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/zwatch/zwatch/internal/units"
)

// Render writes the human-readable form of a report, as
// `zwatch disks --input FILE` prints it.
func Render(w io.Writer, r *Report) error {
	if r == nil {
		_, err := fmt.Fprintln(w, "no SMART report")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := &printer{w: tw}
	renderIdentity(p, r)
	renderHealth(p, r)
	renderAttributes(p, r.Attributes)
	renderNVMe(p, r.NVMe)
	renderSCSI(p, r.SCSI)
	renderTail(p, r)
	if p.err != nil {
		return fmt.Errorf("render SMART report: %w", p.err)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("render SMART report: %w", err)
	}
	return nil
}

// printer keeps the first write error so the render functions stay linear.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// kv prints "key:\tvalue" when the value is known.
func (p *printer) kv(key, value string) {
	if value != "" {
		p.f("%s:\t%s\n", key, value)
	}
}

func renderIdentity(p *printer, r *Report) {
	p.kv("Device", r.Device)
	p.kv("Model", r.Model)
	p.kv("Serial", r.Serial)
	p.kv("WWN", r.WWN)
	p.kv("Firmware", r.Firmware)
	p.kv("Transport", r.Transport)
	p.kv("By-id", r.ByID)
	if r.SizeBytes > 0 {
		p.kv("Capacity", fmt.Sprintf("%s (%d bytes)", units.Decimal(r.SizeBytes), r.SizeBytes))
	}
	if r.LogicalSector > 0 {
		p.kv("Sector size", fmt.Sprintf("%d logical, %d physical", r.LogicalSector, r.PhysicalSector))
	}
	if r.RotationRPM != nil {
		p.kv("Rotation", rotationText(*r.RotationRPM))
	}
}

func renderHealth(p *printer, r *Report) {
	if r.InStandby {
		age := "no earlier reading"
		if r.LastReadingAgeS != nil {
			age = fmt.Sprintf("last reading %ds ago", *r.LastReadingAgeS)
		}
		p.kv("Power mode", "standby, not woken ("+age+")")
	}
	p.kv("SMART health", passedText(r.SmartPassed))
	if r.TemperatureC != nil {
		p.kv("Temperature", tempText(*r.TemperatureC, r.TempWarnC, r.TempCritC))
	}
	if r.PowerOnHours != nil {
		p.kv("Power-on hours", fmt.Sprint(*r.PowerOnHours))
	}
	if r.PowerCycles != nil {
		p.kv("Power cycles", fmt.Sprint(*r.PowerCycles))
	}
	if r.ATAErrorCount != nil {
		p.kv("ATA error log", fmt.Sprintf("%d errors", *r.ATAErrorCount))
	}
}

func renderAttributes(p *printer, attrs []Attribute) {
	if len(attrs) == 0 {
		return
	}
	p.f("\nID\tATTRIBUTE\tVALUE\tWORST\tTHRESH\tRAW\tFAILED\n")
	for _, a := range attrs {
		raw := a.RawString
		if raw == "" {
			raw = fmt.Sprint(a.Raw)
		}
		failed := a.WhenFailed
		if failed == "" {
			failed = "-"
		}
		p.f("%d\t%s\t%d\t%d\t%d\t%s\t%s\n", a.ID, a.Name, a.Value, a.Worst, a.Thresh, raw, failed)
	}
	p.f("\n")
}

func renderNVMe(p *printer, n *NVMe) {
	if n == nil {
		return
	}
	cw := fmt.Sprintf("0x%02x", n.CriticalWarning)
	if len(n.CriticalWarningBits) > 0 {
		cw += " (" + strings.Join(n.CriticalWarningBits, ", ") + ")"
	}
	p.kv("Critical warning", cw)
	p.kv("Available spare", fmt.Sprintf("%d%% (threshold %d%%)", n.AvailableSpare, n.AvailableSpareThreshold))
	p.kv("Percentage used", fmt.Sprintf("%d%%", n.PercentageUsed))
	p.kv("Media errors", fmt.Sprint(n.MediaErrors))
	p.kv("Error log entries", fmt.Sprint(n.NumErrLogEntries))
	p.kv("Unsafe shutdowns", fmt.Sprint(n.UnsafeShutdowns))
}

func renderSCSI(p *printer, s *SCSI) {
	if s == nil {
		return
	}
	opt := func(key string, v *uint64) {
		if v != nil {
			p.kv(key, fmt.Sprint(*v))
		}
	}
	opt("Grown defects", s.GrownDefects)
	opt("Uncorrected reads", s.ReadUncorrected)
	opt("Uncorrected writes", s.WriteUncorrected)
	opt("Uncorrected verifies", s.VerifyUncorrected)
}

func renderTail(p *printer, r *Report) {
	if st := r.SelfTest; st != nil {
		p.kv("Last self-test", fmt.Sprintf("%s: %s at %d h", st.Type, st.Status, st.LifetimeHours))
	}
	exit := fmt.Sprint(r.ExitStatus.Code)
	for _, b := range r.ExitStatus.Bits {
		exit += "\n\t  " + b + ": " + ExitBitMeaning(b)
	}
	p.kv("smartctl exit", exit)
	for _, e := range r.Errors {
		p.kv("Message", e)
	}
}

func passedText(p *bool) string {
	switch {
	case p == nil:
		return "unknown"
	case *p:
		return "PASSED"
	}
	return "FAILED"
}

func tempText(c int, warn, crit *int) string {
	s := fmt.Sprintf("%d °C", c)
	var lim []string
	if warn != nil {
		lim = append(lim, fmt.Sprintf("warning %d °C", *warn))
	}
	if crit != nil {
		lim = append(lim, fmt.Sprintf("critical %d °C", *crit))
	}
	if len(lim) > 0 {
		s += " (" + strings.Join(lim, ", ") + ")"
	}
	return s
}

func rotationText(rpm int) string {
	switch {
	case rpm == 0:
		return "solid state"
	case rpm < 0:
		return "rotating, speed unknown"
	}
	return fmt.Sprintf("%d rpm", rpm)
}
