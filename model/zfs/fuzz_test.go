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
	// The slow-I/O captures (l5, l6): the SLOW column, with and without -p.
	addCapturedSeeds(f, "l[56]-*zpool-status-s*.txt")
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
	// The slow-I/O captures (l5, l6): slow_ios of every leaf.
	addCapturedSeeds(f, "l[56]-*zpool-status*.json")
	// Synthetic seeds (not real output): flat layout and odd value kinds.
	f.Add([]byte(`{"pools":{"t":{"name":"t","vdevs":{"t":{"vdev_type":"root"},"a":{"parent":"t","class":"log","read_errors":"1.2K"}},"scan_stats":{"function":"SCRUB","state":"SCANNING","to_examine":10,"skipped":20}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseStatusJSON(bytes.NewReader(data))
	})
}

func FuzzParseEvents(f *testing.F) {
	addFixtureSeeds(f, "zpool-events")
	// The delay and deadman events of capture step l (l5, l6).
	addCapturedSeeds(f, "l[56]-*zpool-events-v.txt")
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

// addCapturedSeeds seeds f with the captures of testdata/captured/*/
// whose names match pattern.
func addCapturedSeeds(f *testing.F, pattern string) {
	paths, _ := filepath.Glob(filepath.Join(repoTestdata, "captured", "*", pattern))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzParseDatasetProps: never a panic; every dataset returned has a name;
// UnknownProperty only names what could be a property.
func FuzzParseDatasetProps(f *testing.F) {
	addFixtureSeeds(f, "zfs-list-datasets")
	addCapturedSeeds(f, "*zfs-list-datasets.txt*")
	addCapturedSeeds(f, "*.zfs-list-Hp.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cols := range [][]string{DatasetPropColumns, DatasetColumns, {"name"}, {"name", "mounted", "encryption"}} {
			ds, _ := ParseDatasetProps(bytes.NewReader(data), cols)
			for _, d := range ds {
				if d.Name == "" {
					t.Fatalf("dataset without a name from %q", data)
				}
			}
		}
		if prop, ok := UnknownProperty(data); ok && !validPropName(prop) {
			t.Fatalf("UnknownProperty %q", prop)
		}
	})
}

// FuzzSummarizeSnapshots: never a panic; the counts add up to the total,
// the stats are in name order, and a scheme always has a period.
func FuzzSummarizeSnapshots(f *testing.F) {
	addCapturedSeeds(f, "*snapshots.txt")
	f.Add([]byte("tank/a b@autosnap_2026-11-30_00:00:01_daily\t1796000000\t0\ntank/a b@x@y\t1\t1.5K\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		stats, total, _ := SummarizeSnapshots(bytes.NewReader(data))
		sum := 0
		for i, st := range stats {
			sum += st.Count
			if i > 0 && stats[i-1].Dataset >= st.Dataset {
				t.Fatalf("stats out of order: %q, %q", stats[i-1].Dataset, st.Dataset)
			}
			if st.Scheme != nil && (st.Scheme.Period <= 0 || st.Scheme.Tool == "" || st.Scheme.Tool == ToolSyncoid) {
				t.Fatalf("scheme %+v", *st.Scheme)
			}
			// The names kept are copies of the input's, not of a reused buffer.
			if !bytes.Contains(data, []byte(st.Dataset+"@"+st.NewestName)) {
				t.Fatalf("newest %s@%s is not in the input", st.Dataset, st.NewestName)
			}
			if st.Scheme != nil && !bytes.Contains(data, []byte(st.Dataset+"@"+st.Scheme.NewestName)) {
				t.Fatalf("scheme's newest %s@%s is not in the input", st.Dataset, st.Scheme.NewestName)
			}
		}
		if sum != total {
			t.Fatalf("counts %d, total %d", sum, total)
		}
	})
}

// FuzzRecognizeSnapshot: the hand-made matchers agree with the regular
// expressions of the name forms (referenceRecognize); a recognised name
// has a tool and a non-negative period, and syncoid's markers never one.
func FuzzRecognizeSnapshot(f *testing.F) {
	for _, s := range []string{
		"autosnap_2026-11-30_00:00:01_daily", "syncoid_host_2026-11-30_00:00:01-GMT-05:00",
		"zfs-auto-snap_frequent-2026-11-30-0015", "auto-2026-11-30_00-00", "auto-20190101.0000-2w",
		"zrepl_20261130_000000_000", "pyznap_2026-11-30_00:00:00_hourly", "zfs-auto-snap-2018-11-23-2229",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		tool, label, period, ok := RecognizeSnapshot(name)
		if rt, rl, rok := referenceRecognize(name); rt != tool || rl != label || rok != ok {
			t.Fatalf("%q: %q %q %v, the expressions say %q %q %v", name, tool, label, ok, rt, rl, rok)
		}
		if ok && (tool == "" || period < 0 || tool == ToolSyncoid && period != 0) {
			t.Fatalf("%q: %q %v", name, tool, period)
		}
		if !ok && (tool != "" || period != 0) {
			t.Fatalf("%q not recognised but %q %v", name, tool, period)
		}
	})
}

// FuzzParseImport: never a panic; a pool has a name and an id, and no
// more missing devices than devices.
func FuzzParseImport(f *testing.F) {
	addFixtureSeeds(f, "zpool-import")
	addCapturedSeeds(f, "*zpool-import*.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		pools, err := ParseImport(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, p := range pools {
			if p.Name == "" || p.ID == "" || len(p.Missing) > p.Devices {
				t.Fatalf("pool %+v", p)
			}
		}
	})
}
