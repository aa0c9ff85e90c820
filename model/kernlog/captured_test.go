package kernlog

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The QEMU captures (testdata/captured/zfs-2.3.2/README.md, capture step l)
// hold each moment five ways, read from one guest at the same time. Every
// format must give the same messages, and so the same findings.
var capturedMoments = []struct {
	moment   string
	findings map[string]int
}{
	// scsi-hd unplugged under write load: only the cache flush fails,
	// with DID_BAD_TARGET: the disk is gone, it did not fail.
	{"l1-scsi-unplug", map[string]int{"gone sda": 1}},
	// virtio-blk and NVMe unplugged through ACPI hotplug: the kernel says
	// nothing about the disk, only ZFS's zio lines (not kernel findings:
	// zpool events report them).
	{"l2-virtio-unplug", map[string]int{}},
	{"l3-nvme-unplug", map[string]int{}},
	// blkdebug returning EIO on reads: QEMU answers with Aborted Command /
	// I/O process terminated; three failed reads, each one SCSI finding
	// (the sense key) and one block-layer finding.
	{"l4-read-errors", map[string]int{"command_failed sda": 3, "io_error sda": 3}},
	// A throttled virtio disk: slow, but the kernel said nothing at all
	// (journalctl printed "-- No entries --"): see TestCapturedSilentKernel.
	// Deadman with failmode=continue hit a kernel BUG (an oops and its
	// trace): none of it is about a disk.
	{"l6-deadman-continue", map[string]int{}},
}

var capturedFormats = []struct {
	suffix string
	format Format
}{
	{".kmsg.txt", FormatKmsg},
	{".dmesg.txt", FormatDmesg},
	{".dmesg-T.txt", FormatDmesgTime},
	{".journalctl-k.txt", FormatJournal},
	{".journalctl-k-o-json.json", FormatJournalJSON},
}

func readCaptured(t *testing.T, name string) ([]Record, Format) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "captured", "zfs-2.3.2", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []Record
	format, err := ReadSaved(f, func(r Record) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return recs, format
}

func TestCapturedKernelLogsAgreeAcrossFormats(t *testing.T) {
	for _, m := range capturedMoments {
		t.Run(m.moment, func(t *testing.T) {
			var first []string
			for _, cf := range capturedFormats {
				recs, format := readCaptured(t, m.moment+cf.suffix)
				if format != cf.format {
					t.Errorf("%s: format %q, want %q", cf.suffix, format, cf.format)
				}
				var msgs []string
				for _, r := range recs {
					msgs = append(msgs, r.Message)
				}
				if first == nil {
					first = msgs
				} else if !slices.Equal(msgs, first) {
					t.Errorf("%s: %d messages differ from the kmsg capture's %d:\n%q\n%q", cf.suffix, len(msgs), len(first), msgs, first)
				}
				got := findingsOf(recs)
				for k, n := range m.findings {
					if got[k] != n {
						t.Errorf("%s: %q: %d findings, want %d", cf.suffix, k, got[k], n)
					}
				}
				for k, n := range got {
					if _, ok := m.findings[k]; !ok {
						t.Errorf("%s: unexpected finding %q ×%d", cf.suffix, k, n)
					}
				}
			}
		})
	}
}

// A throttled disk, and deadman with failmode=wait, leave the kernel log
// empty: every capture of those moments is "not a kernel log", never a log
// with no findings.
func TestCapturedSilentKernel(t *testing.T) {
	for _, moment := range []string{"l5-slow", "l6-deadman"} {
		checkSilent(t, moment)
	}
}

func checkSilent(t *testing.T, moment string) {
	t.Helper()
	for _, cf := range capturedFormats {
		f, err := os.Open(filepath.Join("..", "..", "testdata", "captured", "zfs-2.3.2", moment+cf.suffix))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ReadSaved(f, func(Record) error { return nil })
		f.Close()
		if !errors.Is(err, ErrNotKernelLog) {
			t.Errorf("%s%s: %v, want ErrNotKernelLog", moment, cf.suffix, err)
		}
	}
}

// The structured sources keep what the text ones lose: the kmsg and journal
// JSON records of the read errors name the SCSI device and say the level.
func TestCapturedStructuredFields(t *testing.T) {
	for _, name := range []string{"l4-read-errors.kmsg.txt", "l4-read-errors.journalctl-k-o-json.json"} {
		recs, _ := readCaptured(t, name)
		r := recs[0]
		if r.Device != "+scsi:0:0:5:0" || r.Priority != 6 || r.Facility != 0 || r.Mono != 323336421000 {
			t.Errorf("%s: first record %+v", name, r)
		}
	}
}

// journalctl -o json-seq is -o json with an RS byte before each record:
// derived here from the real JSON capture by adding it.
func TestJournalJSONSeq(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "captured", "zfs-2.3.2", "l4-read-errors.journalctl-k-o-json.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := readCaptured(t, "l4-read-errors.journalctl-k-o-json.json")
	seq := "\x1e" + strings.ReplaceAll(string(data), "\n{", "\n\x1e{")
	recs, format, err := readAll(t, seq)
	if err != nil || format != FormatJournalJSON || !slices.Equal(recs, want) {
		t.Errorf("format %q, %d records (want %d), err %v", format, len(recs), len(want), err)
	}
}

// Each record of a raw capture, as one read(2) of /dev/kmsg returned it
// (its line and the dictionary lines under it), parses on its own to the
// record ReadSaved gives for it.
func TestParseKmsgOnCapturedRecords(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "captured", "zfs-2.3.2", "l*.kmsg.txt"))
	paths = append(paths, filepath.Join("..", "..", "testdata", "kernel-log", "kmsg-udisks-1231-nvme-fabrics.txt"))
	total := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var records []string
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if strings.HasPrefix(line, " ") && len(records) > 0 {
				records[len(records)-1] += line
			} else if line != "" {
				records = append(records, line)
			}
		}
		var want []Record
		_, err = ReadSaved(strings.NewReader(string(data)), func(r Record) error { want = append(want, r); return nil })
		if len(records) == 0 {
			if !errors.Is(err, ErrNotKernelLog) {
				t.Errorf("%s: empty capture gave %v", p, err)
			}
			continue
		}
		if len(want) != len(records) {
			t.Fatalf("%s: ReadSaved gave %d records, the file holds %d", p, len(want), len(records))
		}
		for i, raw := range records {
			got, err := ParseKmsg([]byte(raw))
			if err != nil || got != want[i] {
				t.Errorf("%s record %d: %+v, %v\nwant %+v", p, i, got, err, want[i])
			}
		}
		total += len(records)
	}
	if total < 50 {
		t.Errorf("only %d real records checked", total)
	}
}

// journalctl's other short formats, derived from the real short capture by
// rewriting only its stamps (the guest's clock said 2026-12-01, UTC):
// short-iso, short-iso-precise and short-full give the same messages.
func TestJournalShortStampVariants(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "captured", "zfs-2.3.2", "l4-read-errors.journalctl-k.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := readCaptured(t, "l4-read-errors.journalctl-k.txt")
	for _, stamp := range []string{"2026-12-01T18:32:44+0000", "2026-12-01T18:32:44.123456+00:00", "Tue 2026-12-01 18:32:44 UTC"} {
		var sb strings.Builder
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if len(line) > len("Dec 01 18:32:44") {
				line = stamp + line[len("Dec 01 18:32:44"):]
			}
			sb.WriteString(line)
		}
		recs, format, err := readAll(t, sb.String())
		if err != nil || format != FormatJournal || len(recs) != len(want) {
			t.Fatalf("%s: format %q, %d records (want %d), err %v", stamp, format, len(recs), len(want), err)
		}
		for i := range recs {
			if recs[i].Message != want[i].Message || recs[i].Time.Year() != 2026 {
				t.Errorf("%s: record %d %+v", stamp, i, recs[i])
			}
		}
	}
}
