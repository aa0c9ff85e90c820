package zfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// addFixtureSeeds seeds f with every file in testdata/<dir>.
func addFixtureSeeds(f *testing.F, dirs ...string) {
	for _, dir := range dirs {
		paths, _ := filepath.Glob(filepath.Join(repoTestdata, dir, "*"))
		for _, p := range paths {
			if filepath.Ext(p) == ".md" {
				continue
			}
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
}

func FuzzParseStatusText(f *testing.F) {
	addFixtureSeeds(f, "zpool-status")
	// Synthetic seeds (not real output): edge shapes for the tree builder.
	f.Add([]byte("  pool: x\nconfig:\n\tNAME STATE\n\tx ONLINE 0 0 0\n\t      deep ONLINE 1 2 3\n\tspares\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pools, err := ParseStatusTextIn(bytes.NewReader(data), time.UTC)
		if err != nil {
			return
		}
		for _, p := range pools {
			for _, cv := range p.AllVdevs() {
				_ = cv.Vdev.Leaves()
			}
		}
	})
}

// FuzzUnpaste feeds the pasted-input normaliser real outputs, their pasted
// variants (pasteDerivations) and whatever the fuzzer makes of them: it must
// not panic, must not grow its input beyond the lines a fragment gains,
// and what it returns must parse (or fail) without panicking.
func FuzzUnpaste(f *testing.F) {
	addFixtureSeeds(f, "zpool-status", "smartctl", "zpool-list")
	paths, _ := filepath.Glob(filepath.Join(repoTestdata, "zpool-status", "*.txt"))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		d := pasteDerivations[i%len(pasteDerivations)]
		f.Add([]byte(d.derive(string(b))))
		if j := bytes.Index(b, []byte("config:")); j >= 0 {
			f.Add([]byte(d.derive(string(b[j:]))))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := Unpaste(data)
		if len(out) > 2*len(data)+len(pastedPoolNote)+64 { // the header names the pool after a row
			t.Fatalf("Unpaste grew %d bytes to %d", len(data), len(out))
		}
		pools, err := ParseStatusTextIn(bytes.NewReader(out), time.UTC)
		if err == nil {
			for _, p := range pools {
				for _, cv := range p.AllVdevs() {
					_ = cv.Vdev.Leaves()
				}
			}
		}
		_, _ = ParseStatusJSON(bytes.NewReader(out))
	})
}

func FuzzParseStatusJSON(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(repoTestdata, "zpool-status", "*.json"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	// Synthetic seeds (not real output): flat layout and odd value kinds.
	f.Add([]byte(`{"pools":{"t":{"name":"t","vdevs":{"t":{"vdev_type":"root"},"a":{"parent":"t","class":"log","read_errors":"1.2K"}},"scan_stats":{"function":"SCRUB","state":"SCANNING","to_examine":10,"skipped":20}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseStatusJSON(bytes.NewReader(data))
	})
}

func FuzzParseEvents(f *testing.F) {
	addFixtureSeeds(f, "zpool-events")
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = parseEventsIn(bytes.NewReader(data), time.UTC, func(Event) error { return nil })
	})
}

func FuzzParseArcstats(f *testing.F) {
	addFixtureSeeds(f, "arcstats")
	f.Fuzz(func(t *testing.T, data []byte) {
		a, _ := ParseArcstats(bytes.NewReader(data))
		b, _ := ParseArcSysctl(bytes.NewReader(data))
		_ = ARCFrom(a, b)
		_ = ARCFrom(b, a)
	})
}

func FuzzParseList(f *testing.F) {
	addFixtureSeeds(f, "zpool-list")
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseList(bytes.NewReader(data))
		_, _ = ParseListColumns(bytes.NewReader(data), []string{"name", "health", "capacity"})
		_, _ = ParseDatasets(bytes.NewReader(data))
	})
}
