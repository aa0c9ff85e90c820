package kernlog

import (
	"os"
	"path/filepath"
	"testing"
)

// savedCase is what one real saved log under testdata/kernel-log must give:
// its format, how many records, and the findings by "kind ref".
type savedCase struct {
	file     string
	format   Format
	records  int
	findings map[string]int
}

func readTestdata(t testing.TB, file string) ([]Record, Format) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "kernel-log", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []Record
	format, err := ReadSaved(f, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return recs, format
}

func findingsOf(recs []Record) map[string]int {
	got := map[string]int{}
	for _, r := range recs {
		if f, ok := Classify(r.Message); ok {
			got[string(f.Kind)+" "+f.Ref.String()]++
		}
	}
	return got
}

func checkSavedCase(t *testing.T, c savedCase) {
	t.Helper()
	recs, format := readTestdata(t, c.file)
	if format != c.format {
		t.Errorf("format %q, want %q", format, c.format)
	}
	if len(recs) != c.records {
		t.Errorf("%d records, want %d", len(recs), c.records)
	}
	got := findingsOf(recs)
	for k, n := range c.findings {
		if got[k] != n {
			t.Errorf("%q: %d findings, want %d", k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := c.findings[k]; !ok {
			t.Errorf("unexpected finding %q ×%d", k, n)
		}
	}
}
