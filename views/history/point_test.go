package history

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/zwatch/zwatch/model/smart"
)

func FuzzDecodePoint(f *testing.F) {
	for _, p := range []point{
		{Host: "nas1", Source: "disk/WD-1", T: 1767225600, Values: map[string]float64{SeriesTemperature: 31, SeriesPending: 0}},
		{Host: "nas1", Source: "pool/tank", T: 1767225600, Period: 3600, Aggs: map[string]agg{SeriesCapacity: {Min: 10, Max: 12.5, Mean: 11, N: 12}}},
		{Host: "nas1", Source: "pool/tank", T: 1767225600, Period: 86400, Aggs: map[string]agg{VdevSeries("sdb", SeriesReadErrors): {Min: 1, Max: 3, Mean: 2, N: 288}}},
	} {
		b, err := encodePoint(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"v":1,"h":"x","src":"pool/p","t":3600,"p":3600,"agg":{"a":[1,0,2,1]}}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePoint(b)
		if err != nil {
			return
		}
		// What decodes is a point a reader can plot and store again as it is.
		again, err := encodePoint(p)
		if err != nil {
			t.Fatalf("decoded point does not encode: %v (%+v)", err, p)
		}
		q, err := decodePoint(again)
		if err != nil {
			t.Fatalf("re-encoded point does not decode: %v", err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the point: %+v != %+v", p, q)
		}
	})
}

func TestDecodePointRefusesNonsense(t *testing.T) {
	for _, s := range []string{
		`{"v":1,"h":"x","src":"tank","t":100}`,
		`{"v":1,"h":"","src":"pool/tank","t":100}`,
		`{"v":1,"h":"x","src":"pool/tank","t":100,"p":60}`,
		`{"v":1,"h":"x","src":"pool/tank","t":100,"p":3600,"agg":{"a":[1,2,3,1]}}`,
		`{"v":1,"h":"x","src":"pool/tank","t":3600,"p":3600,"agg":{"a":[3,2,1,1]}}`,
		`{"v":1,"h":"x","src":"pool/tank","t":3600,"p":3600,"agg":{"a":[1,2,1.5,0]}}`,
		`{"v":1,"h":"x","src":"pool/tank","t":3600,"val":{"a":1},"agg":{"a":[1,1,1,1]}}`,
		`{"v":7,"h":"x","src":"pool/tank","t":3600}`,
		`[]`,
	} {
		if p, err := decodePoint([]byte(s)); err == nil {
			t.Errorf("%s decodes as %+v", s, p)
		}
	}
}

// The history's slim SMART reading takes from real smartctl reports the
// same values as smart.Report.
func TestSmartReadingMatchesReport(t *testing.T) {
	for _, name := range []string{"sata-hdd-wd140edfz-healthy.json", "sata-ssd-samsung-840-xall-crc-errors.json", "nvme-samsung-970evo-media-errors.json"} {
		r := smartOf(t, "../../testdata/smartctl/"+name)
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var slim smartReading
		if err := json.Unmarshal(raw, &slim); err != nil {
			t.Fatal(err)
		}
		got := diskValues(&slim)
		want := reportValues(r)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
		if len(got) < 2 {
			t.Errorf("%s: only %v", name, got)
		}
	}
}

// reportValues are the series read straight from a smart.Report.
func reportValues(r *smart.Report) map[string]float64 {
	v := map[string]float64{}
	if r.TemperatureC != nil {
		v[SeriesTemperature] = float64(*r.TemperatureC)
	}
	if r.PowerOnHours != nil {
		v[SeriesPowerOnHours] = float64(*r.PowerOnHours)
	}
	for _, a := range r.Attributes {
		if name, ok := ataSeries[a.ID]; ok {
			v[name] = float64(a.Raw)
		}
	}
	if r.NVMe != nil {
		v[SeriesMediaErrors] = float64(r.NVMe.MediaErrors)
		v[SeriesAvailableSpare] = float64(r.NVMe.AvailableSpare)
		v[SeriesPercentageUsed] = float64(r.NVMe.PercentageUsed)
	}
	return v
}

func TestAlertSubjectIsNoDiskNamedAlert(t *testing.T) {
	if !isAlertSubject("zwatch.v1.nas1.alert") || isAlertSubject("zwatch.v1.nas1.smart.alert") {
		t.Error("a disk whose serial is \"alert\" is taken for the alert subject, or the alert subject is not")
	}
}
