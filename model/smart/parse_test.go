package smart

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const fixtureDir = "../../testdata/smartctl"

// fixtureWant is what Parse must read from one real smartctl output in
// testdata/smartctl (provenance in SOURCES.md there).
type fixtureWant struct {
	model, serial, wwn, firmware, transport, smartType string

	passed       *bool
	temp         *int
	warn, crit   *int
	hours        *uint64
	cycles       *uint64
	size         uint64
	rpm          *int
	logical      int
	physical     int
	attrs        int
	attr         *Attribute // checked in full when set
	ataErrors    *uint64
	nvme         *NVMe
	scsi         *SCSI
	selfTest     *SelfTest
	exit         int
	bits         []string
	errors       []string
	errorsPrefix string // when errors is nil, the first error starts with this
}

func b(v bool) *bool     { return &v }
func i(v int) *int       { return &v }
func u(v uint64) *uint64 { return &v }

var none = []string{}

// fixtureWants has an entry for every non-scan fixture; TestParseFixtures
// fails on a fixture without one, so new outputs get real assertions.
func fixtureWants() map[string]fixtureWant {
	return map[string]fixtureWant{
		"sata-hdd-wd140edfz-healthy.json": {
			model: "WDC WD140EDFZ-11A0VA0", serial: "9RK1XXXX", wwn: "0x5000cca264eb01d7", firmware: "81.00A81",
			transport: "sata", smartType: "sat", passed: b(true), temp: i(32), hours: u(1730), cycles: u(9),
			size: 14000519643136, rpm: i(5400), logical: 512, physical: 4096, attrs: 18,
			attr:      &Attribute{ID: 194, Name: "Temperature_Celsius", Value: 51, Worst: 51, Raw: 163210330144, RawString: "32 (Min/Max 24/38)"},
			ataErrors: u(0), selfTest: &SelfTest{Type: "Short offline", Passed: true, Status: "Completed without error", LifetimeHours: 1708},
			bits: none, errors: none,
		},
		"usb-jmicron-hitachi-hdd-failing-realloc-now.json": {
			model: "Hitachi HDS721050DLE630", serial: "MSK423Y20S3HBC", wwn: "0x5000cca37fca81a8", firmware: "MS1OA650",
			transport: "usb", smartType: "usbjmicron", passed: b(false), temp: i(25), hours: u(65592), cycles: u(86),
			size: 500107862016, rpm: i(7200), logical: 512, physical: 4096, attrs: 17,
			attr:      &Attribute{ID: 5, Name: "Reallocated_Sector_Ct", Value: 1, Worst: 1, Thresh: 5, Raw: 1975, RawString: "1975", WhenFailed: "now"},
			ataErrors: u(56), selfTest: &SelfTest{Type: "Short offline", Passed: true, Status: "Completed without error", LifetimeHours: 42},
			exit: 216, bits: []string{ExitDiskFailing, ExitPrefailBelow, ExitErrorLog, ExitSelfTestLogErrs}, errors: none,
		},
		"usb-jmicron-wd3200bevt-failing-realloc-now-uncorrect.json": {
			model: "WDC WD3200BEVT-60ZCT0", serial: "WD-WXE708D44602", wwn: "0x50014ee201cfb464", firmware: "12.01A12",
			transport: "usb", smartType: "usbjmicron", passed: b(false), temp: i(27), hours: u(16402), cycles: u(3440),
			size: 320072933376, rpm: i(5400), logical: 512, physical: 512, attrs: 20,
			attr:      &Attribute{ID: 5, Name: "Reallocated_Sector_Ct", Value: 133, Worst: 133, Thresh: 140, Raw: 535, RawString: "535", WhenFailed: "now"},
			ataErrors: u(84), selfTest: &SelfTest{Type: "Short offline", Passed: false, Status: "Completed: read failure", LifetimeHours: 16402},
			exit: 216, bits: []string{ExitDiskFailing, ExitPrefailBelow, ExitErrorLog, ExitSelfTestLogErrs}, errors: none,
		},
		"usb-sat-sandisk-pssd-74.json": {
			// A USB SSD smartctl drives as plain sat: transport reads sata here;
			// the collector corrects it from the sysfs path.
			model: "SanDisk pSSD", serial: "06c9f4c44", wwn: "0x5001b4409f6c444c", firmware: "3",
			transport: "sata", smartType: "sat", passed: b(true), hours: u(11), cycles: u(223),
			size: 15693664256, rpm: i(0), logical: 512, physical: 512, attrs: 13,
			attr:      &Attribute{ID: 5, Name: "Reallocated_Sector_Ct", Value: 100, Worst: 100, RawString: "0"},
			ataErrors: u(0), bits: none, errors: none,
		},
		"sata-ssd-wd-red-sa500-4tb-no-thresh.json": {
			model: "WDC  WDS400T1R0A-68A4W0", serial: "REDACTED", wwn: "0x5001b448b0708fba", firmware: "REDACTED",
			transport: "sata", smartType: "sat", passed: b(true), temp: i(27), hours: u(8244), cycles: u(13),
			size: 4000787030016, rpm: i(0), logical: 512, physical: 512, attrs: 25,
			// no thresh / when_failed keys: zero values, not an error
			attr:      &Attribute{ID: 5, Name: "Reallocated_Sector_Ct", Value: 100, Worst: 100, RawString: "0"},
			ataErrors: u(0), bits: none, errors: none,
		},
		"sata-ssd-samsung-840-xall-crc-errors.json": {
			model: "Samsung SSD 840 Series", serial: "S14LNEACC02756X", wwn: "0x50025385500ccc29", firmware: "DXT06B0Q",
			transport: "sata", smartType: "sat", passed: b(true), temp: i(33), warn: i(70), crit: i(70),
			hours: u(19497), cycles: u(4169), size: 500107862016, rpm: i(0), logical: 512, physical: 512, attrs: 14,
			attr:      &Attribute{ID: 5, Name: "Reallocated_Sector_Ct", Value: 100, Worst: 100, Thresh: 10, RawString: "0"},
			ataErrors: u(0), bits: none, errors: none,
		},
		"sata-hdd-seagate-st3200820as-100k-hours.json": {
			model: "ST3200820AS", serial: "REDACTED", firmware: "REDACTED", transport: "sata", smartType: "sat",
			passed: b(true), temp: i(35), hours: u(100216), cycles: u(75), size: 200049647616, logical: 512, physical: 512, attrs: 18,
			attr:      &Attribute{ID: 5, Name: "Reallocated_Sector_Ct", Value: 100, Worst: 100, Thresh: 36, RawString: "0"},
			ataErrors: u(0), bits: none, errors: none,
		},
		"sata-hdd-seagate-attrs-only-jA.json": {
			// smartctl -jA: attributes only, no identity or health verdict.
			transport: "sata", smartType: "sat", temp: i(29), cycles: u(354), attrs: 22,
			attr: &Attribute{ID: 5, Name: "Reallocated_Sector_Ct", Value: 100, Worst: 100, Thresh: 36, RawString: "0"},
			bits: none, errors: none,
		},
		"nvme-intel-660p-healthy.json": {
			model: "INTEL SSDPEKNW010T8", serial: "BTNH93710FS91P0B", firmware: "002C", transport: "nvme", smartType: "nvme",
			passed: b(true), temp: i(36), hours: u(2401), cycles: u(266), size: 1024209543168, rpm: i(0), logical: 512,
			nvme: &NVMe{AvailableSpare: 100, AvailableSpareThreshold: 10, UnsafeShutdowns: 43}, bits: none, errors: none,
		},
		"nvme-samsung-970evo-media-errors.json": {
			model: "Samsung SSD 970 EVO 500GB", serial: "S466NX0M776250H", wwn: "eui.0025385791b4f537", firmware: "2B2QEXE7",
			transport: "nvme", smartType: "nvme", passed: b(true), temp: i(35), hours: u(12798), cycles: u(25),
			size: 500107862016, rpm: i(0), logical: 512,
			nvme: &NVMe{AvailableSpare: 99, AvailableSpareThreshold: 10, PercentageUsed: 3, MediaErrors: 7, NumErrLogEntries: 62, UnsafeShutdowns: 10},
			bits: none, errors: none,
		},
		"nvme-corsair-mp510-err-log-entries.json": {
			model: "Force MP510", serial: "yes", wwn: "eui.6479a72801424331", firmware: "ECFM12.3", transport: "nvme", smartType: "nvme",
			passed: b(true), temp: i(38), hours: u(6487), cycles: u(4), size: 480103981056, rpm: i(0), logical: 512,
			nvme: &NVMe{AvailableSpare: 100, AvailableSpareThreshold: 5, PercentageUsed: 1, NumErrLogEntries: 8382, UnsafeShutdowns: 4},
			bits: none, errors: none,
		},
		"nvme-seagate-firecuda530-73.json": {
			model: "Seagate FireCuda 530 ZP4000GM30023", serial: "REDACTED", wwn: "eui.6479a780df00358d", firmware: "REDACTED",
			transport: "nvme", smartType: "nvme", passed: b(true), temp: i(36), hours: u(4733), cycles: u(5),
			size: 4000787030016, rpm: i(0), logical: 512,
			nvme: &NVMe{AvailableSpare: 100, AvailableSpareThreshold: 5, NumErrLogEntries: 20, UnsafeShutdowns: 2},
			bits: none, errors: none,
		},
		"nvme-toshiba-kxg6-xall-73.json": {
			model: "KXG6AZNV512G TOSHIBA", serial: "Y9SF71LHFWZL", wwn: "eui.8ce38e050013b40b", firmware: "5108AGLA",
			transport: "nvme", smartType: "nvme", passed: b(true), temp: i(35), hours: u(1767), cycles: u(3021),
			size: 512110190592, rpm: i(0), logical: 512,
			nvme: &NVMe{AvailableSpare: 100, AvailableSpareThreshold: 10, PercentageUsed: 3, UnsafeShutdowns: 132},
			bits: none, errors: none,
		},
		"compact-nvme-skhynix-pc601-72.json": {
			model: "PC601 NVMe SK hynix 512GB", serial: "XXXNVMe", wwn: "eui.ace42e000a1f2f12", firmware: "80002111",
			transport: "nvme", smartType: "nvme", passed: b(true), temp: i(44), hours: u(9944), cycles: u(2982),
			size: 512110190592, rpm: i(0), logical: 512,
			nvme: &NVMe{AvailableSpare: 100, AvailableSpareThreshold: 50, PercentageUsed: 2, UnsafeShutdowns: 676},
			bits: none, errors: none,
		},
		"sas-hgst-4tb-73-verify-log.json": {
			model: "REDACTED", serial: "REDACTED", firmware: "REDACTED", transport: "sas", smartType: "scsi",
			passed: b(true), temp: i(34), crit: i(85), hours: u(1641), size: 4000787030016, rpm: i(7200), logical: 512,
			scsi: &SCSI{GrownDefects: u(0), ReadUncorrected: u(0), WriteUncorrected: u(0), VerifyUncorrected: u(0)},
			bits: none, errors: none,
		},
		"sas-hitachi-h109060sesun600g-73.json": {
			model: "HITACHI H109060SESUN600G", serial: "REDACTED", wwn: "0x1234567890abcdef", firmware: "A31A",
			transport: "sas", smartType: "scsi", passed: b(true), temp: i(26), crit: i(85), hours: u(22364),
			size: 600127266816, rpm: i(10020), logical: 512,
			scsi: &SCSI{GrownDefects: u(0), ReadUncorrected: u(0), WriteUncorrected: u(0), VerifyUncorrected: u(0)},
			bits: none, errors: none,
		},
		"sas-seagate-exos-scsi-selftest-log-74.json": {
			model: "SEAGATE ST0000000", serial: "XYZZZZ", wwn: "0x5000cb0847", firmware: "RSL5", transport: "sas", smartType: "scsi",
			passed: b(true), temp: i(24), crit: i(60), hours: u(34222), size: 13715978079776, rpm: i(7200), logical: 512, physical: 4096,
			scsi:     &SCSI{GrownDefects: u(0), ReadUncorrected: u(0), WriteUncorrected: u(0), VerifyUncorrected: u(0)},
			selfTest: &SelfTest{Type: "Background long", Passed: true, Status: "Completed", LifetimeHours: 90},
			bits:     none, errors: none,
		},
		"scsi-seagate-st4000nm0043-grown-defects-noheader.json": {
			// The publisher removed the smartctl object: no exit status.
			model: "SEAGATE ST4000NM0043", serial: "Z1Z5DWJK0000XXXXXXXX", firmware: "MS03", transport: "scsi", smartType: "scsi",
			passed: b(true), temp: i(34), crit: i(68), hours: u(43549), size: 4000787030016, rpm: i(7200), logical: 512,
			scsi: &SCSI{GrownDefects: u(56), ReadUncorrected: u(0), WriteUncorrected: u(0)},
			bits: none, errors: none,
		},
		"scsi-toshiba-al13sxb60en-freebsd-72-flattened.json": {
			model: "TOSHIBA AL13SXB60EN", serial: "XXX", firmware: "5702", transport: "scsi", smartType: "scsi",
			passed: b(true), temp: i(41), crit: i(65), hours: u(64579), size: 600127266816, rpm: i(15000), logical: 512,
			scsi: &SCSI{GrownDefects: u(0), ReadUncorrected: u(0), WriteUncorrected: u(0)},
			bits: none, errors: none,
		},
		"compact-dell-perc-h740p-virtual-disk-exit4-73.json": {
			model: "DELL PERC H740P Mini", serial: "serialxxx", wwn: "0x62cea7f069f4f4002cdd61b0b23cf598", firmware: "5.13",
			transport: "scsi", smartType: "scsi", temp: i(0), size: 11518296981504, rpm: i(0), logical: 512,
			exit: 4, bits: []string{ExitSmartCmdFailed}, errors: none,
		},
		"compact-scsi-exit4-no-smart-support.json": {
			serial: "dd8b62ae0b480010", transport: "scsi", smartType: "scsi", temp: i(0), size: 239990276096, rpm: i(0),
			logical: 512, physical: 4096, exit: 4, bits: []string{ExitSmartCmdFailed}, errors: none,
		},
		"compact-freebsd-atacam-ses-exit2.json": {
			transport: "sata", smartType: "atacam", exit: 2, bits: []string{ExitOpenFailed}, errors: none,
		},
		"compact-sd-card-reader-exit2-device-only.json": {
			transport: "sata", smartType: "sat", exit: 2, bits: []string{ExitOpenFailed}, errors: none,
		},
		"health-exit2-scsi-device-only-no-messages.json": {
			transport: "scsi", smartType: "scsi", exit: 2, bits: []string{ExitOpenFailed}, errors: none,
		},
		"compact-open-failed-megaraid-hint-exit2.json": {
			exit: 2, bits: []string{ExitOpenFailed},
			errors: []string{"Smartctl open device: /dev/sda failed: DELL or MegaRaid controller, please try adding '-d megaraid,N'"},
		},
		"open-failed-no-such-device-sat-rpi-71.json": {
			exit: 2, bits: []string{ExitOpenFailed}, errors: []string{"Smartctl open device: /dev/sdb [SAT] failed: No such device"},
		},
		"open-failed-operation-not-permitted-71-container.json": {
			exit: 2, bits: []string{ExitOpenFailed}, errors: []string{"Smartctl open device: /dev/sda failed: Operation not permitted"},
		},
		"open-failed-operation-not-permitted-72-haos.json": {
			exit: 2, bits: []string{ExitOpenFailed}, errors: []string{"Smartctl open device: /dev/sda failed: Operation not permitted"},
		},
		"open-failed-windows-access-denied-error5.json": {
			exit: 2, bits: []string{ExitOpenFailed}, errorsPrefix: "Smartctl open device: /dev/sda failed: ",
		},
		"open-failed-unable-to-detect-device-type.json": {
			exit: 1, bits: []string{ExitCmdline}, errors: []string{"/dev/nonexistent: Unable to detect device type"},
		},
		"usb-unknown-bridge-75-exit1.json": {
			exit: 1, bits: []string{ExitCmdline},
			errors: []string{"/dev/disk/by-id/usb-Flash_Disk_3.0_7966051146147389472-0:0: Unknown USB bridge [0x048d:0x1234 (0x200)]"},
		},
	}
}

func TestParseFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	wants := fixtureWants()
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "scan-") {
			continue // smartctl --scan output, tested in package disk
		}
		t.Run(name, func(t *testing.T) {
			w, ok := wants[name]
			if !ok {
				t.Fatalf("fixture %s has no expectations in fixtureWants", name)
			}
			rep := parseFile(t, f)
			checkIdentity(t, rep, w)
			checkHealth(t, rep, w)
			checkLogs(t, rep, w)
			checkExit(t, rep, w)
		})
	}
}

func parseFile(t *testing.T, path string) *Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return rep
}

func eq[T comparable](t *testing.T, field string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", field, got, want)
	}
}

func eqPtr[T comparable](t *testing.T, field string, got, want *T) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Errorf("%s = %v, want %v", field, show(got), show(want))
	case *got != *want:
		t.Errorf("%s = %v, want %v", field, *got, *want)
	}
}

func show[T any](p *T) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func checkIdentity(t *testing.T, rep *Report, w fixtureWant) {
	t.Helper()
	eq(t, "model", rep.Model, w.model)
	eq(t, "serial", rep.Serial, w.serial)
	eq(t, "wwn", rep.WWN, w.wwn)
	eq(t, "firmware", rep.Firmware, w.firmware)
	eq(t, "transport", rep.Transport, w.transport)
	eq(t, "smart_type", rep.SmartType, w.smartType)
	eq(t, "size", rep.SizeBytes, w.size)
	eqPtr(t, "rotation", rep.RotationRPM, w.rpm)
	eq(t, "logical sector", rep.LogicalSector, w.logical)
	eq(t, "physical sector", rep.PhysicalSector, w.physical)
}

func checkHealth(t *testing.T, rep *Report, w fixtureWant) {
	t.Helper()
	eqPtr(t, "smart_passed", rep.SmartPassed, w.passed)
	eqPtr(t, "temperature", rep.TemperatureC, w.temp)
	eqPtr(t, "temp warning", rep.TempWarnC, w.warn)
	eqPtr(t, "temp critical", rep.TempCritC, w.crit)
	eqPtr(t, "power-on hours", rep.PowerOnHours, w.hours)
	eqPtr(t, "power cycles", rep.PowerCycles, w.cycles)
	eq(t, "in standby", rep.InStandby, false)
}

func checkLogs(t *testing.T, rep *Report, w fixtureWant) {
	t.Helper()
	eq(t, "attribute count", len(rep.Attributes), w.attrs)
	if w.attr != nil {
		found := false
		for _, a := range rep.Attributes {
			if a.ID == w.attr.ID {
				found = true
				eq(t, "attribute", a, *w.attr)
			}
		}
		if !found {
			t.Errorf("attribute %d missing", w.attr.ID)
		}
	}
	eqPtr(t, "ata error count", rep.ATAErrorCount, w.ataErrors)
	if !reflect.DeepEqual(rep.NVMe, w.nvme) {
		t.Errorf("nvme = %+v, want %+v", show(rep.NVMe), show(w.nvme))
	}
	if !reflect.DeepEqual(rep.SCSI, w.scsi) {
		t.Errorf("scsi = %+v, want %+v", show(rep.SCSI), show(w.scsi))
	}
	eqPtr(t, "last self-test", rep.SelfTest, w.selfTest)
}

func checkExit(t *testing.T, rep *Report, w fixtureWant) {
	t.Helper()
	eq(t, "exit code", rep.ExitStatus.Code, w.exit)
	if !reflect.DeepEqual(rep.ExitStatus.Bits, w.bits) {
		t.Errorf("exit bits = %q, want %q", rep.ExitStatus.Bits, w.bits)
	}
	switch {
	case w.errors != nil:
		if !reflect.DeepEqual(rep.Errors, w.errors) {
			t.Errorf("errors = %q, want %q", rep.Errors, w.errors)
		}
	case w.errorsPrefix != "":
		if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0], w.errorsPrefix) {
			t.Errorf("errors = %q, want one starting %q", rep.Errors, w.errorsPrefix)
		}
	}
}

func TestParseRejects(t *testing.T) {
	full, err := os.ReadFile(filepath.Join(fixtureDir, "sata-hdd-wd140edfz-healthy.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", ErrEmpty},
		{"whitespace", " \n\t", ErrEmpty},
		// smartctl without --json prints its banner
		{"text output", "smartctl 7.3 2022-02-28 r5338 [x86_64-linux] (local build)\n", ErrNotJSON},
		{"truncated", string(full[:len(full)/2]), ErrTruncated},
		{"truncated after brace", "{", ErrTruncated},
		{"other JSON", `{"foo": 1}`, ErrNotSmartctl},
		{"null", "null", ErrNotJSON},
		{"array", "[1,2]", ErrNotJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(c.in))
			if !errors.Is(err, c.want) || rep != nil {
				t.Fatalf("Parse = %v, %v; want error %v", rep, err, c.want)
			}
		})
	}
	for _, bad := range []string{`{"smartctl": {"exit_status": "two"}}`, string(full) + `{"x":1}`} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("Parse(%.40q…) = nil error, want one", bad)
		}
	}
}

// TestParseStandby uses the message smartmontools prints for -n standby
// (ataprint.cpp: "Device is in %s mode, exit(%d)") inside the JSON envelope
// of a real 7.3 exit-2 output captured on the dev VM; only the message text
// differs from that capture.
func TestParseStandby(t *testing.T) {
	for _, msg := range []string{"Device is in STANDBY mode, exit(2)", "Device is in SLEEP mode, exit(2)", "/dev/sda: Device is in STANDBY (OS) mode, exit(2)"} {
		in := `{"json_format_version":[1,0],"smartctl":{"version":[7,3],"svn_revision":"5338","argv":["smartctl","--json=c","-a","-n","standby","/dev/sda"],` +
			`"messages":[{"string":"` + msg + `","severity":"information"}],"exit_status":2}}`
		rep, err := Parse(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if !rep.InStandby || rep.ExitStatus.Code != 2 {
			t.Errorf("%q: InStandby=%v code=%d, want true, 2", msg, rep.InStandby, rep.ExitStatus.Code)
		}
	}
	// A failed open also exits 2 and must not read as standby.
	rep := parseFile(t, filepath.Join(fixtureDir, "open-failed-operation-not-permitted-72-haos.json"))
	if rep.InStandby {
		t.Error("open failure read as standby")
	}
}

func TestWWNAndTransport(t *testing.T) {
	naa := func(n, o, id uint64) *rawWWN { return &rawWWN{NAA: &n, OUI: &o, ID: &id} }
	if got := naaWWN(naa(5, 0x0014ee, 0x2b34130ff)); got != "0x50014ee2b34130ff" {
		t.Errorf("naaWWN = %s", got) // wwn-0x50014ee2b34130ff from a real by-id listing
	}
	if got := naaWWN(naa(5, 1<<24, 0)); got != "" {
		t.Errorf("out-of-range OUI gave %s", got)
	}
	for typ, want := range map[string]string{
		"sat": "sata", "sat,12": "sata", "ata": "sata", "nvme": "nvme", "usbjmicron": "usb", "usbcypress": "usb",
		"usbprolific": "usb", "usbsunplus": "usb", "sntasmedia": "usb", "sntrealtek": "usb", "scsi": "scsi",
	} {
		if got := transportOf(&rawDevice{Type: typ}, nil); got != want {
			t.Errorf("transportOf(%s) = %s, want %s", typ, got, want)
		}
	}
	if got := transportOf(&rawDevice{Type: "megaraid,0", Protocol: "SCSI"}, &rawNamed{Name: "SAS (SPL-4)"}); got != "sas" {
		t.Errorf("megaraid SAS = %s", got)
	}
}

// TestParseCaptured reads smartctl 7.3 outputs captured from the QEMU VM
// (testdata/captured/zfs-2.3.2, README.md there): emulated disks.
func TestParseCaptured(t *testing.T) {
	dir := "../../testdata/captured/zfs-2.3.2"
	cases := map[string]fixtureWant{
		"a.smartctl-a-json-ata.json": {
			model: "WDC WD40EFRX-68N32N0", serial: "WD-WCC7K0000001", firmware: "2.5+", transport: "sata", smartType: "sat",
			passed: b(true), temp: i(31), hours: u(1), cycles: u(0), size: 1 << 30, logical: 512, physical: 512, attrs: 7,
			attr:      &Attribute{ID: 1, Name: "Raw_Read_Error_Rate", Value: 100, Worst: 100, Thresh: 6, RawString: "0"},
			ataErrors: u(0), bits: none, errors: none,
		},
		"a.smartctl-a-json-ata-ssd.json": {
			model: "Samsung SSD 860 EVO 1TB", serial: "S3Z9NB0K000003", firmware: "2.5+", transport: "sata", smartType: "sat",
			passed: b(true), temp: i(31), hours: u(1), cycles: u(0), size: 1 << 30, logical: 512, physical: 512, attrs: 7,
			ataErrors: u(0), bits: none, errors: none,
		},
		"a.smartctl-a-json-nvme.json": {
			model: "QEMU NVMe Ctrl", serial: "ZWNVME0001", firmware: "7.2.22", transport: "nvme", smartType: "nvme",
			passed: b(true), temp: i(50), hours: u(0), cycles: u(0), rpm: i(0), nvme: &NVMe{}, bits: none, errors: none,
		},
		"a.smartctl-a-json-scsi.json": {
			// QEMU scsi-hd answers no SMART: exit 4, no verdict, data kept.
			model: "SEAGATE ST4000NM0035", serial: "ZWS0001", wwn: "0x5000c500a0000001", firmware: "2.5+", transport: "scsi",
			smartType: "scsi", temp: i(0), size: 1 << 30, rpm: i(0), logical: 512, exit: 4, bits: []string{ExitSmartCmdFailed}, errors: none,
		},
		"a.smartctl-a-json-virtio.json": {
			exit: 1, bits: []string{ExitCmdline}, errors: []string{"/dev/disk/by-id/virtio-ZWV0001: Unable to detect device type"},
		},
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("capture not present: %v", err)
			}
			rep := parseFile(t, path)
			checkIdentity(t, rep, w)
			checkHealth(t, rep, w)
			checkLogs(t, rep, w)
			checkExit(t, rep, w)
		})
	}
}
