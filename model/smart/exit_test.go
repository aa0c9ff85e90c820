package smart

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestExitBits(t *testing.T) {
	cases := []struct {
		code int
		want []string
	}{
		{0, []string{}},
		{-1, []string{}}, // killed by a signal: not smartctl's bits
		{1, []string{ExitCmdline}},
		{2, []string{ExitOpenFailed}},
		{4, []string{ExitSmartCmdFailed}},
		{8, []string{ExitDiskFailing}},
		{16, []string{ExitPrefailBelow}},
		{32, []string{ExitPastBelow}},
		{64, []string{ExitErrorLog}},
		{128, []string{ExitSelfTestLogErrs}},
		// 216 = 0xD8, the real exit status of the failing JMicron fixture
		{216, []string{ExitDiskFailing, ExitPrefailBelow, ExitErrorLog, ExitSelfTestLogErrs}},
		{255, []string{ExitCmdline, ExitOpenFailed, ExitSmartCmdFailed, ExitDiskFailing, ExitPrefailBelow, ExitPastBelow, ExitErrorLog, ExitSelfTestLogErrs}},
		{256 | 4, []string{ExitSmartCmdFailed}}, // bits above 7 are ignored
	}
	for _, c := range cases {
		if got := ExitBits(c.code); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ExitBits(%d) = %q, want %q", c.code, got, c.want)
		}
	}
	for _, name := range ExitBits(255) {
		if ExitBitMeaning(name) == "" {
			t.Errorf("no meaning for %s", name)
		}
	}
	if ExitBitMeaning("nope") != "" {
		t.Error("meaning for an unknown bit")
	}
}

func TestCriticalWarningBits(t *testing.T) {
	if got := CriticalWarningBits(0); got != nil {
		t.Errorf("0 -> %q", got)
	}
	want := []string{"spare_below_threshold", "temperature", "reliability_degraded", "read_only", "volatile_backup_failed", "persistent_memory_readonly"}
	if got := CriticalWarningBits(0x3f); !reflect.DeepEqual(got, want) {
		t.Errorf("0x3f -> %q", got)
	}
	if got := CriticalWarningBits(0x0c); !reflect.DeepEqual(got, []string{"reliability_degraded", "read_only"}) {
		t.Errorf("0x0c -> %q", got)
	}
}

func TestRender(t *testing.T) {
	rep := parseFile(t, filepath.Join(fixtureDir, "usb-jmicron-hitachi-hdd-failing-realloc-now.json"))
	var buf bytes.Buffer
	if err := Render(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Hitachi HDS721050DLE630", "MSK423Y20S3HBC", "SMART health:", "FAILED", "Reallocated_Sector_Ct", "now",
		"216", "disk_failing", "Short offline: Completed without error at 42 h", "500 GB"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	nv := parseFile(t, filepath.Join(fixtureDir, "nvme-samsung-970evo-media-errors.json"))
	buf.Reset()
	if err := Render(&buf, nv); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Media errors:", "7", "Available spare:", "99% (threshold 10%)", "solid state"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("NVMe render lacks %q:\n%s", want, buf.String())
		}
	}
	if err := Render(&buf, nil); err != nil {
		t.Error(err)
	}
}

// TestReportJSONSchema pins the key names documented in docs/smart-schema.md.
func TestReportJSONSchema(t *testing.T) {
	rep := parseFile(t, filepath.Join(fixtureDir, "nvme-samsung-970evo-media-errors.json"))
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "serial", "wwn", "transport", "smart_passed", "temperature_c", "power_on_hours", "attributes", "nvme", "exit_status", "errors"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	nv, _ := m["nvme"].(map[string]any)
	for _, k := range []string{"critical_warning", "available_spare", "available_spare_threshold", "percentage_used", "media_errors", "num_err_log_entries"} {
		if _, ok := nv[k]; !ok {
			t.Errorf("nvme JSON lacks %q", k)
		}
	}
}

func fixtureSeeds(tb testing.TB) [][]byte {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	var seeds [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

func FuzzParse(f *testing.F) {
	for _, s := range fixtureSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Parse(bytes.NewReader(data))
		if (rep == nil) == (err == nil) {
			t.Fatalf("Parse returned report %v with error %v", rep != nil, err)
		}
		if rep != nil {
			var buf bytes.Buffer
			if err := Render(&buf, rep); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func benchFixture(b *testing.B, name string) {
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.Run("sata-wd140edfz", func(b *testing.B) { benchFixture(b, "sata-hdd-wd140edfz-healthy.json") })
	b.Run("nvme-samsung-970evo", func(b *testing.B) { benchFixture(b, "nvme-samsung-970evo-media-errors.json") })
}
