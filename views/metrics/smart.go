package metrics

import (
	"path"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview"
)

type ruleAttribute struct {
	id     int
	name   string
	series string
}

// ruleAttributes are the ATA attributes the status view carries by their
// history series name, with smartctl's (drivedb's default) attribute name.
func ruleAttributes() [6]ruleAttribute {
	return [6]ruleAttribute{
		{5, "Reallocated_Sector_Ct", history.SeriesReallocated},
		{187, "Reported_Uncorrect", history.SeriesReportedUncorrect},
		{188, "Command_Timeout", history.SeriesCommandTimeout},
		{197, "Current_Pending_Sector", history.SeriesPending},
		{198, "Offline_Uncorrectable", history.SeriesOfflineUncorrectable},
		{199, "UDMA_CRC_Error_Count", history.SeriesUDMACRCErrors},
	}
}

// deviceLabel is smartctl_exporter's device label: the kernel name (sda,
// nvme0n1) as its scan finds it; else the name smartctl was given, as the
// exporter shortens it (/dev/ and /dev/disk/by-id/ dropped, / as _, a
// ",N" device type appended); else the by-id name, else the serial.
func deviceLabel(d *statusview.Disk) string {
	switch {
	case d.Kernel != "":
		return strings.ReplaceAll(strings.TrimPrefix(d.Kernel, "/dev/"), "/", "_")
	case d.SMART != nil && d.SMART.Device != "":
		name := d.SMART.Device
		for _, p := range []string{"/dev/disk/by-id/", "/dev/disk/by-path/", "/dev/"} {
			if strings.HasPrefix(name, p) {
				name = strings.TrimPrefix(name, p)
				break
			}
		}
		name = strings.ReplaceAll(name, "/", "_")
		if strings.Contains(d.SMART.SmartType, ",") {
			name += "_" + strings.ReplaceAll(d.SMART.SmartType, ",", "_")
		}
		return name
	case d.ByID != "":
		return path.Base(d.ByID)
	}
	return d.Serial
}

// protocol is smartctl's device.protocol for a device type.
func protocol(smartType, transport string) string {
	switch {
	case smartType == "nvme" || transport == "nvme":
		return "NVMe"
	case smartType == "scsi" || transport == "sas" || transport == "scsi":
		return "SCSI"
	case smartType != "" || transport != "":
		return "ATA"
	}
	return ""
}

// disk emits one disk's metrics. With its last SMART reading as smartctl
// reported it (d.SMART), every ATA attribute and the NVMe and SCSI logs are
// shown; without, the counters the rules watch that the view carries.
func (c *viewCollector) disk(e *emitter, host string, d *statusview.Disk) {
	m := c.d
	dev := deviceLabel(d)
	l := []string{host, dev}
	e.gauge(m.diskInfo, 1, host, dev, d.Serial, d.Model, d.ByID, d.Bay, d.Transport, d.Pool, d.Vdev, d.Health)
	e.gauge(m.diskProblem, boolf(d.Problem), l...)
	if d.SmartAt == nil {
		return // no SMART reading yet: nothing to show in smartctl's shape
	}
	e.gauge(m.diskSmartAt, unix(*d.SmartAt), l...)
	e.gauge(m.smartDevice, 1, host, dev, d.SmartType, protocol(d.SmartType, d.Transport),
		"", d.Model, d.Serial, "", d.Firmware, "", "", "", "", "", "", "")
	switch d.Health {
	case "passed":
		e.gauge(m.smartStatus, 1, l...)
	case "failing":
		e.gauge(m.smartStatus, 0, l...)
	}
	if d.TemperatureC != nil {
		e.gauge(m.smartTemp, float64(*d.TemperatureC), host, dev, "current")
	}
	if d.PowerOnHours != nil {
		e.gauge(m.smartPowerOn, float64(*d.PowerOnHours)*3600, l...)
	}
	if d.SizeBytes > 0 {
		e.gauge(m.smartCapacity, float64(d.SizeBytes), l...)
	}
	if d.SMART != nil {
		c.reading(e, l, d.SMART)
		return
	}
	for _, a := range ruleAttributes() {
		if v, ok := d.Attributes[a.series]; ok {
			e.gauge(m.smartAttr, float64(v), host, dev, a.name, "", "", "raw", strconv.Itoa(a.id))
		}
	}
	if v, ok := d.Attributes[history.SeriesMediaErrors]; ok {
		e.gauge(m.smartMediaErr, float64(v), l...)
	}
	if v, ok := d.Attributes[history.SeriesAvailableSpare]; ok {
		e.gauge(m.smartSpare, float64(v), l...)
	}
	if v, ok := d.Attributes[history.SeriesPercentageUsed]; ok {
		e.gauge(m.smartUsed, float64(v), l...)
	}
}

// reading emits what only the full SMART reading has: the whole ATA
// attribute table (value, worst, thresh and raw, as smartctl_exporter), the
// NVMe health log, the SCSI counters and smartctl's exit status.
func (c *viewCollector) reading(e *emitter, l []string, rep *smart.Report) {
	m := c.d
	host, dev := l[0], l[1]
	e.gauge(m.smartExit, float64(rep.ExitStatus.Code), l...)
	if rep.RotationRPM != nil && *rep.RotationRPM > 0 {
		e.gauge(m.smartRotation, float64(*rep.RotationRPM), l...)
	}
	if rep.PowerCycles != nil {
		e.gauge(m.diskPowerCycles, float64(*rep.PowerCycles), l...)
	}
	for _, a := range rep.Attributes {
		id := strconv.Itoa(a.ID)
		e.gauge(m.smartAttr, float64(a.Value), host, dev, a.Name, "", "", "value", id)
		e.gauge(m.smartAttr, float64(a.Worst), host, dev, a.Name, "", "", "worst", id)
		e.gauge(m.smartAttr, float64(a.Thresh), host, dev, a.Name, "", "", "thresh", id)
		e.gauge(m.smartAttr, float64(a.Raw), host, dev, a.Name, "", "", "raw", id)
	}
	if nv := rep.NVMe; nv != nil {
		e.gauge(m.smartUsed, float64(nv.PercentageUsed), l...)
		e.gauge(m.smartSpare, float64(nv.AvailableSpare), l...)
		e.gauge(m.smartSpareThresh, float64(nv.AvailableSpareThreshold), l...)
		e.gauge(m.smartCritWarn, float64(nv.CriticalWarning), l...)
		e.gauge(m.smartMediaErr, float64(nv.MediaErrors), l...)
		e.gauge(m.smartErrLog, float64(nv.NumErrLogEntries), l...)
	}
	if s := rep.SCSI; s != nil {
		if s.GrownDefects != nil {
			e.gauge(m.scsiGrownDefects, float64(*s.GrownDefects), l...)
		}
		if s.ReadUncorrected != nil {
			e.gauge(m.scsiReadUncorrected, float64(*s.ReadUncorrected), l...)
		}
		if s.WriteUncorrected != nil {
			e.gauge(m.scsiWriteUncorrected, float64(*s.WriteUncorrected), l...)
		}
	}
}
