package disk

import "testing"

func TestLookupSMR(t *testing.T) {
	cases := []struct {
		model string
		want  string
	}{
		// Model strings as smartctl and udev print them (smartctl "Device
		// Model" from openzfs/zfs#10214; by-id spelling with underscores).
		{"WDC WD40EFAX-68JH4N0", "WD40EFAX"},
		{"WDC_WD40EFAX-68JH4N0", "WD40EFAX"},
		{"WDC WD20EFAX-68FB5N0", "WD20EFAX"},
		{"ST8000DM004-2CX188", "ST8000DM004"},
		{"st4000dm004-2cv104", "ST4000DM004"},
		{"ST2000DM008", "ST2000DM008"},
		{"TOSHIBA HDWD240", "HDWD240"},
		// CMR disks that share letters with SMR ones must not match.
		{"WDC WD80EFAX-68LHPN0", ""}, // 8 TB Red: CMR
		{"WDC WD40EFRX-68N32N0", ""}, // Red (now Red Plus): CMR
		{"WDC WD140EDFZ-11A0VA0", ""},
		{"ST4000VN000-1H4168", ""},
		{"ST18000DM0040", ""}, // not a real model: a longer number must not match ST8000DM004
		{"XWD40EFAX", ""},
		{"", ""},
	}
	for _, c := range cases {
		m, ok := LookupSMR(c.model)
		if c.want == "" {
			if ok {
				t.Errorf("LookupSMR(%q) = %s, want no match", c.model, m.Model)
			}
			continue
		}
		if !ok || m.Model != c.want {
			t.Errorf("LookupSMR(%q) = %q, %v; want %q", c.model, m.Model, ok, c.want)
		}
	}
}

func TestKnownSMRHasSources(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range KnownSMR() {
		if m.Source == "" || m.Vendor == "" || m.Family == "" {
			t.Errorf("%s: vendor, family and source are required", m.Model)
		}
		if seen[m.Model] {
			t.Errorf("%s listed twice", m.Model)
		}
		seen[m.Model] = true
	}
	for _, must := range []string{"WD20EFAX", "WD30EFAX", "WD40EFAX", "WD60EFAX", "ST8000DM004", "ST4000DM004", "ST2000DM008"} {
		if !seen[must] {
			t.Errorf("%s missing from the SMR list", must)
		}
	}
}
