package rules

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/smart"
)

// Each case parses a real `smartctl -j` output into a smart message.
func TestSmartRulesFixtures(t *testing.T) {
	cases := []struct {
		file string
		want []string
	}{
		{"sata-hdd-wd140edfz-healthy.json", nil},
		{"nvme-intel-660p-healthy.json", nil},
		{"nvme-seagate-firecuda530-73.json", nil},
		{"sas-hitachi-h109060sesun600g-73.json", nil},
		{"sas-hgst-4tb-73-verify-log.json", nil},
		{"sata-ssd-wd-red-sa500-4tb-no-thresh.json", nil},
		{"sata-hdd-seagate-st3200820as-100k-hours.json", nil},
		// 8000 errors in the NVMe error log but no media errors: not a disk problem.
		{"nvme-corsair-mp510-err-log-entries.json", nil},
		{"usb-jmicron-hitachi-hdd-failing-realloc-now.json", []string{
			"SmartAttribute critical attribute=5 disk=MSK423Y20S3HBC",
			"SmartAttribute warning attribute=197 disk=MSK423Y20S3HBC",
			"SmartFailed critical disk=MSK423Y20S3HBC",
		}},
		{"nvme-samsung-970evo-media-errors.json", []string{"NVMeMediaErrors warning disk=S466NX0M776250H"}},
		{"scsi-seagate-st4000nm0043-grown-defects-noheader.json", []string{"SCSIGrownDefects warning disk=Z1Z5DWJK0000XXXXXXXX"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			e := newTestEngine()
			observe(t, e, smartEnv(t, smartReport(t, tc.file), t0), t0)
			sameList(t, active(e), tc.want)
		})
	}
}

// Overrides, by serial and by model glob, on the real failing Hitachi.
func TestSmartOverrides(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	r := smartReport(t, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	cases := []struct {
		name string
		ov   []smartOverride
		want []string
	}{
		{"ignore 197 by serial", []smartOverride{{Serial: "MSK423Y20S3HBC", Attribute: 197, Ignore: true}}, []string{
			"SmartAttribute critical attribute=5 disk=MSK423Y20S3HBC"}},
		{"raise 5 by model", []smartOverride{{Model: "Hitachi HDS7210*", Attribute: 5, Warning: u(1000), Critical: u(5000)}}, []string{
			"SmartAttribute warning attribute=197 disk=MSK423Y20S3HBC",
			"SmartAttribute warning attribute=5 disk=MSK423Y20S3HBC"}},
		{"other serial untouched", []smartOverride{{Serial: "OTHER", Attribute: 5, Ignore: true}}, []string{
			"SmartAttribute critical attribute=5 disk=MSK423Y20S3HBC",
			"SmartAttribute warning attribute=197 disk=MSK423Y20S3HBC"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(func(c *config.RulesConfig) { smartConfig.edit(c, func(s *smartSettings) { s.Overrides = tc.ov }) })
			observe(t, e, smartEnv(t, r, t0), t0)
			sameList(t, active(e, nameSmartAttribute), tc.want)
		})
	}
}

// A counter reaching the next power of ten is news: the alert is sent
// again; one more pending sector, or a steady count, is not.
func TestSmartAttributeIncreaseResends(t *testing.T) {
	r := smartReport(t, "usb-jmicron-hitachi-hdd-failing-realloc-now.json")
	// Critical at 100 pending, so that 10 is the ladder alone, no severity rise.
	e := newTestEngine(func(c *config.RulesConfig) {
		c.GroupWait = 0
		smartConfig.edit(c, func(s *smartSettings) { s.Pending.Critical = 100 })
	})
	observe(t, e, smartEnv(t, r, t0), t0)
	if n := e.Tick(t0); len(n) != 1 {
		t.Fatalf("first: %d notifications", len(n))
	}
	observe(t, e, smartEnv(t, r, t0.Add(30*time.Minute)), t0.Add(30*time.Minute))
	if n := e.Tick(t0.Add(30 * time.Minute)); len(n) != 0 {
		t.Fatalf("steady: %v", noteLines(n))
	}
	attr(r, 197).Raw, attr(r, 197).RawString = 9, "9" // hand-made: one more pending sector
	observe(t, e, smartEnv(t, r, t0.Add(time.Hour)), t0.Add(time.Hour))
	if n := e.Tick(t0.Add(time.Hour)); len(n) != 0 {
		t.Fatalf("8 → 9 pending sectors paged again: %v", noteLines(n))
	}
	attr(r, 197).Raw, attr(r, 197).RawString = 10, "10" // hand-made: the tenth
	observe(t, e, smartEnv(t, r, t0.Add(2*time.Hour)), t0.Add(2*time.Hour))
	sameList(t, noteLines(e.Tick(t0.Add(2*time.Hour))), []string{"firing warning SmartAttribute: MSK423Y20S3HBC (/dev/sdc): 10 pending sectors", "--"})
}

// Cases no real output shows (no fixture has a CRC count, a hot disk, a
// failed newest self-test or NVMe warning bits): real reports changed by hand.
func TestSmartHandMadeCases(t *testing.T) {
	i := func(v int) *int { return &v }
	cases := []struct {
		name string
		file string
		mod  func(*smart.Report)
		cfg  func(*config.RulesConfig)
		want []string
	}{
		{"crc names the link", "sata-hdd-wd140edfz-healthy.json", func(r *smart.Report) {
			setRaw(r, 199, 12)
		}, nil, []string{"SmartCRC warning disk=9RK1XXXX"}},
		{"hdd at 57 °C", "sata-hdd-wd140edfz-healthy.json", func(r *smart.Report) { r.TemperatureC = i(57) }, nil,
			[]string{"SmartTemperature warning disk=9RK1XXXX"}},
		{"hdd at 61 °C", "sata-hdd-wd140edfz-healthy.json", func(r *smart.Report) { r.TemperatureC = i(61) }, nil,
			[]string{"SmartTemperature critical disk=9RK1XXXX"}},
		{"drive's own limit wins", "sata-hdd-wd140edfz-healthy.json", func(r *smart.Report) { r.TemperatureC, r.TempWarnC, r.TempCritC = i(57), i(65), i(70) }, nil, nil},
		{"ssd limits", "nvme-intel-660p-healthy.json", func(r *smart.Report) { r.TemperatureC, r.TempWarnC, r.TempCritC = i(61), nil, nil }, nil, nil},
		{"override 194", "sata-hdd-wd140edfz-healthy.json", func(r *smart.Report) { r.TemperatureC = i(57) }, func(c *config.RulesConfig) {
			smartConfig.edit(c, func(s *smartSettings) {
				s.Overrides = []smartOverride{{Serial: "9RK1XXXX", Attribute: 194, Ignore: true}}
			})
		}, nil},
		{"self-test failed", "usb-jmicron-hitachi-hdd-failing-realloc-now.json", func(r *smart.Report) {
			r.SelfTest = &smart.SelfTest{Type: "Extended offline", Status: "Completed: read failure", LifetimeHours: 40}
			r.Attributes = nil
			r.SmartPassed = nil
		}, nil, []string{"SmartSelfTest critical disk=MSK423Y20S3HBC"}},
		{"nvme warning bits, spare, wear", "nvme-intel-660p-healthy.json", func(r *smart.Report) {
			r.NVMe.CriticalWarning = 0x05
			r.NVMe.AvailableSpare = 8
			r.NVMe.PercentageUsed = 93
		}, nil, []string{
			"NVMeCriticalWarning critical disk=BTNH93710FS91P0B",
			"NVMeSpare critical disk=BTNH93710FS91P0B",
			"NVMeWearout warning disk=BTNH93710FS91P0B",
		}},
		{"nvme spare warning", "nvme-intel-660p-healthy.json", func(r *smart.Report) { r.NVMe.AvailableSpare = 15 }, nil,
			[]string{"NVMeSpare warning disk=BTNH93710FS91P0B"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := smartReport(t, tc.file)
			tc.mod(r)
			var mods []func(*config.RulesConfig)
			if tc.cfg != nil {
				mods = append(mods, tc.cfg)
			}
			e := newTestEngine(mods...)
			observe(t, e, smartEnv(t, r, t0), t0)
			sameList(t, active(e), tc.want)
		})
	}
	if got := nvmeWarningBits(0x05); len(got) != 2 || got[0] != "available spare below threshold" || got[1] != "reliability degraded by media or internal errors" {
		t.Errorf("bits: %v", got)
	}
}

func TestSmartCRCHoldsAfterIncrease(t *testing.T) {
	r := smartReport(t, "sata-hdd-wd140edfz-healthy.json")
	setRaw(r, 199, 3) // hand-made
	e := newTestEngine()
	observe(t, e, smartEnv(t, r, t0), t0)
	a := find(e, nameSmartCRC)
	if a == nil || a.Summary != "9RK1XXXX (/dev/sdb): 3 link CRC errors — check the SATA/SAS cable or backplane slot, not the disk" {
		t.Fatalf("%+v", a)
	}
	later := t0.Add(25 * time.Hour)
	observe(t, e, smartEnv(t, r, later), later) // the same report: skipped as no news
	e.Tick(later)
	if find(e, nameSmartCRC) != nil {
		t.Error("a steady CRC count should end after the hold")
	}
}

// setRaw sets attribute id's raw value (the real WD report has 199 at 0).
func setRaw(r *smart.Report, id int, v uint64) {
	if a := attr(r, id); a != nil {
		a.Raw, a.RawString = v, ""
		return
	}
	r.Attributes = append(r.Attributes, smart.Attribute{ID: id, Raw: v})
}
