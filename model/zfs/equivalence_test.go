package zfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// capturedPairs finds captures of the same pool state in both forms:
// STEP.zpool-status-p-P.txt (text with full paths) and
// STEP.zpool-status-j.json (`-j --json-int -p -P`).
func capturedPairs(t *testing.T) [][2]string {
	t.Helper()
	texts, _ := filepath.Glob(filepath.Join(repoTestdata, "captured", "*", "*.zpool-status-p-P.txt"))
	var pairs [][2]string
	for _, tx := range texts {
		js := strings.TrimSuffix(tx, "-p-P.txt") + "-j.json"
		if _, err := os.Stat(js); err == nil {
			pairs = append(pairs, [2]string{tx, js})
		}
	}
	return pairs
}

func TestTextJSONEquivalence(t *testing.T) {
	pairs := capturedPairs(t)
	if len(pairs) == 0 {
		t.Skip("no text/JSON capture pairs under testdata/captured")
	}
	// Captured seconds apart while the pool changed state: the resilver of
	// step e2 and the dRAID scrub of step f4 finished between the text and
	// the JSON capture (the JSON's scan end_time falls between the two).
	changedBetween := map[string]bool{"e2-replacing.zpool-status-p-P.txt": true, "f4-draid-spare.zpool-status-p-P.txt": true}
	for _, pr := range pairs {
		if changedBetween[filepath.Base(pr[0])] {
			continue
		}
		t.Run(filepath.Base(pr[0]), func(t *testing.T) {
			tf, jf := openPath(t, pr[0]), openPath(t, pr[1])
			// The capture VM runs in UTC (its text dates equal the JSON
			// epoch times read as UTC).
			tp, err := ParseStatusTextIn(tf, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			jp, err := ParseStatusJSON(jf)
			if err != nil {
				t.Fatal(err)
			}
			a, b := comparable(tp), comparable(jp)
			if a != b {
				t.Errorf("text and JSON differ:\n%s", firstDiff(a, b))
			}
			for i := range min(len(tp), len(jp)) {
				if err := sameScan(tp[i].Scan, jp[i].Scan); err != nil {
					t.Errorf("pool %s: %v", tp[i].Name, err)
				}
			}
		})
	}
}

func openPath(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// comparable renders what both forms carry, except the scan (see
// sameScan). Left out: GUIDs (text prints them only for missing devices)
// and slow I/Os (JSON always has them, text only with -s).
func comparable(pools []*Pool) string {
	var sb strings.Builder
	for _, p := range pools {
		fmt.Fprintf(&sb, "pool %s %s msgid=%q see=%q\nstatus=%q\naction=%q\n", p.Name, p.State, p.MsgID, p.See, p.Status, p.Action)
		fmt.Fprintf(&sb, "errors %d %v\n", p.DataErrors.Count, p.DataErrors.Files)
		// The two captures of a running scan are moments apart: a disk can
		// start "(resilvering)" between them, so those notes are not compared.
		running := p.Scan.State == ScanStateScanning || p.Scan.State == ScanStatePaused
		if p.Root != nil {
			writeVdev(&sb, p.Root, 0, running)
		}
		for _, cv := range p.AllVdevs() {
			sb.WriteString("[" + cv.Class + "]\n")
			writeVdev(&sb, cv.Vdev, 1, running)
		}
	}
	return sb.String()
}

func writeVdev(sb *strings.Builder, v *Vdev, depth int, dropProgress bool) {
	notes := v.Notes
	if dropProgress {
		notes = nil
		for _, n := range v.Notes {
			if n != "(resilvering)" && n != "(repairing)" {
				notes = append(notes, n)
			}
		}
	}
	fmt.Fprintf(sb, "%s%s %s %s r%d w%d c%d ~%v path=%s was=%s p%d d%d s%d notes=%q\n",
		strings.Repeat("  ", depth), v.Name, v.Type, v.State, v.ReadErrors, v.WriteErrors, v.ChecksumErrors,
		v.ErrorsApproximate, v.Path, v.Was, v.Parity, v.DraidData, v.DraidSpares, notes)
	for _, c := range v.Children {
		writeVdev(sb, c, depth+1, dropProgress)
	}
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// sameScan compares what text and JSON both say about a scan. Text rounds
// byte counts to three digits, prints no totals once a scan finished, and
// the two captures of a running scan are taken moments apart, so progress
// is compared only for finished scans and only within rounding.
func sameScan(t, j Scan) error {
	if t.Function != j.Function || t.State != j.State || t.Errors != j.Errors {
		return fmt.Errorf("scan %s/%s/%d vs %s/%s/%d", t.Function, t.State, t.Errors, j.Function, j.State, j.Errors)
	}
	if fmtTime(t.Start) != fmtTime(j.Start) || fmtTime(t.End) != fmtTime(j.End) {
		return fmt.Errorf("scan times %s..%s vs %s..%s", fmtTime(t.Start), fmtTime(t.End), fmtTime(j.Start), fmtTime(j.End))
	}
	if t.State != ScanStateFinished {
		return nil
	}
	for _, c := range []struct {
		name string
		a, b uint64
	}{
		{"repaired", t.RepairedBytes, j.RepairedBytes},
		{"examined", t.ExaminedBytes, j.ExaminedBytes},
		{"total", t.TotalBytes, j.TotalBytes},
	} {
		if c.a == 0 && c.name != "repaired" {
			continue // not printed in text
		}
		if !within(c.a, c.b, t.Approximate) {
			return fmt.Errorf("scan %s %d vs %d", c.name, c.a, c.b)
		}
	}
	return nil
}

// within allows the rounding of a three-digit abbreviated number (< 1%).
func within(a, b uint64, approx bool) bool {
	if !approx {
		return a == b
	}
	d := float64(a) - float64(b)
	if d < 0 {
		d = -d
	}
	return d <= 0.01*float64(max(a, b))
}
