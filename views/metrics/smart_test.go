package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview"
)

// oneDisk sends one disk's metrics through the view collector.
type oneDisk struct {
	c    *viewCollector
	d    statusview.Disk
	rep  *smart.Report
	host string
}

func (o oneDisk) Describe(chan<- *prometheus.Desc) {}
func (o oneDisk) Collect(ch chan<- prometheus.Metric) {
	e := &emitter{ch: ch, seen: map[*prometheus.Desc]map[string]struct{}{}}
	d := o.d
	d.SMART = o.rep
	o.c.disk(e, o.host, &d)
}

// recordedDisk parses a real smartctl JSON output and makes the status
// view's disk of it.
func recordedDisk(t *testing.T, file string) (statusview.Disk, *smart.Report) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := smart.Parse(f)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	at := time.Now()
	health := "unknown"
	if rep.SmartPassed != nil {
		health = map[bool]string{true: "passed", false: "failing"}[*rep.SmartPassed]
	}
	return statusview.Disk{Serial: rep.Serial, Model: rep.Model, Kernel: strings.TrimPrefix(rep.Device, "/dev/"),
		Transport: rep.Transport, SizeBytes: rep.SizeBytes, Health: health, TemperatureC: rep.TemperatureC,
		PowerOnHours: rep.PowerOnHours, SmartAt: &at, SmartType: rep.SmartType, Firmware: rep.Firmware}, rep
}

func scrapeDisk(t *testing.T, d statusview.Disk, rep *smart.Report) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(oneDisk{c: &viewCollector{d: newDescs()}, d: d, rep: rep, host: "nas"})
	code, text := scrape(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil)
	if code != 200 {
		t.Fatalf("status %d: %s", code, text)
	}
	promtoolCheck(t, text)
	return text
}

func TestSmartATAInSmartctlExporterShape(t *testing.T) {
	d, rep := recordedDisk(t, filepath.Join("..", "..", "testdata", "smartctl", "sata-ssd-samsung-840-xall-crc-errors.json"))
	fams := families(t, scrapeDisk(t, d, rep))
	dev := map[string]string{"host": "nas", "device": "sda"}
	crc := func(kind string) float64 {
		return value(t, fams, "smartctl_device_attribute", map[string]string{"device": "sda", "attribute_id": "199", "attribute_value_type": kind})
	}
	if raw, val, worst, thresh := crc("raw"), crc("value"), crc("worst"), crc("thresh"); raw != 108 || val != 99 || worst != 99 || thresh != 0 {
		t.Errorf("ATA 199 raw/value/worst/thresh = %v/%v/%v/%v, smartctl said 108/99/99/0", raw, val, worst, thresh)
	}
	if n := len(series(fams, "smartctl_device_attribute", dev)); n != 14*4 {
		t.Errorf("%d attribute series, want 14 attributes × 4 value types", n)
	}
	if v := value(t, fams, "smartctl_device_temperature", map[string]string{"device": "sda", "temperature_type": "current"}); v != 33 {
		t.Errorf("temperature %v, want 33", v)
	}
	if v := value(t, fams, "smartctl_device_power_on_seconds", dev); v != 19497*3600 {
		t.Errorf("power on seconds %v, want 19497 h", v)
	}
	if v := value(t, fams, "smartctl_device_smart_status", dev); v != 1 {
		t.Errorf("smart status %v, want 1 (passed)", v)
	}
	if v := value(t, fams, "smartctl_device", map[string]string{"device": "sda", "serial_number": "S14LNEACC02756X", "interface": "sat", "protocol": "ATA"}); v != 1 {
		t.Errorf("smartctl_device %v", v)
	}
	if v := value(t, fams, "zwatch_disk_power_cycles", dev); v != 4169 {
		t.Errorf("power cycles %v, want 4169", v)
	}
}

func TestSmartNVMeMediaErrors(t *testing.T) {
	d, rep := recordedDisk(t, filepath.Join("..", "..", "testdata", "smartctl", "nvme-samsung-970evo-media-errors.json"))
	fams := families(t, scrapeDisk(t, d, rep))
	dev := map[string]string{"device": "nvme0"}
	for name, want := range map[string]float64{
		"smartctl_device_media_errors":              7,
		"smartctl_device_num_err_log_entries":       62,
		"smartctl_device_percentage_used":           3,
		"smartctl_device_available_spare":           99,
		"smartctl_device_available_spare_threshold": 10,
		"smartctl_device_critical_warning":          0,
		"smartctl_device_smartctl_exit_status":      0,
	} {
		if v := value(t, fams, name, dev); v != want {
			t.Errorf("%s = %v, smartctl said %v", name, v, want)
		}
	}
	if len(series(fams, "smartctl_device_attribute", nil)) != 0 {
		t.Error("an NVMe disk has no ATA attributes")
	}
}

func TestSmartSCSIGrownDefects(t *testing.T) {
	d, rep := recordedDisk(t, filepath.Join("..", "..", "testdata", "smartctl", "scsi-seagate-st4000nm0043-grown-defects-noheader.json"))
	fams := families(t, scrapeDisk(t, d, rep))
	if v := value(t, fams, "smartctl_scsi_grown_defect_list", map[string]string{"device": "sdg"}); v != 56 {
		t.Errorf("grown defects %v, smartctl said 56", v)
	}
	if v := value(t, fams, "smartctl_device", map[string]string{"device": "sdg", "protocol": "SCSI"}); v != 1 {
		t.Errorf("smartctl_device %v", v)
	}
}

// Without the full reading, the counters the view carries still appear
// as smartctl_exporter's raw attributes.
func TestSmartFromViewCountersOnly(t *testing.T) {
	at := time.Now()
	temp, hours := 41, uint64(1200)
	d := statusview.Disk{Serial: "WD-X1", Kernel: "sdc", SmartType: "sat", Health: "failing", TemperatureC: &temp, PowerOnHours: &hours, SmartAt: &at,
		Attributes: map[string]uint64{history.SeriesPending: 24, history.SeriesReallocated: 8}}
	fams := families(t, scrapeDisk(t, d, nil))
	if v := value(t, fams, "smartctl_device_attribute", map[string]string{"device": "sdc", "attribute_id": "197", "attribute_name": "Current_Pending_Sector", "attribute_value_type": "raw"}); v != 24 {
		t.Errorf("pending sectors %v, want 24", v)
	}
	if v := value(t, fams, "smartctl_device_smart_status", map[string]string{"device": "sdc"}); v != 0 {
		t.Errorf("failing disk's smart status %v, want 0", v)
	}
	if n := len(series(fams, "smartctl_device_attribute", nil)); n != 2 {
		t.Errorf("%d attribute series, want the 2 the view has", n)
	}
}
