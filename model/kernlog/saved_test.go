package kernlog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readAll(t *testing.T, in string) ([]Record, Format, error) {
	t.Helper()
	var recs []Record
	format, err := ReadSaved(strings.NewReader(in), func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	return recs, format, err
}

func TestReadSavedNotAKernelLog(t *testing.T) {
	for _, in := range []string{"", "\n\n", "hello world\n$ zpool status\n", "  pool: tank\n state: ONLINE\n"} {
		if _, _, err := readAll(t, in); !errors.Is(err, ErrNotKernelLog) {
			t.Errorf("ReadSaved(%q) = %v, want ErrNotKernelLog", in, err)
		}
	}
}

func TestReadSavedStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	in := strings.Repeat("[    1.000000] ata1: hard resetting link\n", 3)
	_, err := ReadSaved(strings.NewReader(in), func(Record) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err %v after %d records, want stop after 1", err, n)
	}
}

// A line longer than MaxLine is cut and the lines after it are still read.
func TestReadSavedCutsLongLines(t *testing.T) {
	long := "[    5.000000] " + strings.Repeat("x", 3*MaxLine)
	recs, _, err := readAll(t, long+"\n[    6.000000] ata1: hard resetting link\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(recs[0].Message) > MaxLine || recs[1].Message != "ata1: hard resetting link" {
		t.Errorf("got %d records, first %d bytes", len(recs), len(recs[0].Message))
	}
}

func TestReadSavedStampsAndPriorities(t *testing.T) {
	recs, _ := readTestdata(t, "libata-hd-idle-78-linkseq-localized-dmesg-T.txt")
	if want := time.Date(2022, 8, 26, 22, 1, 1, 0, time.UTC); !recs[0].Time.Equal(want) {
		t.Errorf("localized dmesg -T stamp read as %v, want %v", recs[0].Time, want)
	}
	recs, _ = readTestdata(t, "libata-sunxi-41-priority-prefix-limiting-speed.txt")
	if recs[1].Priority != 3 || recs[1].Facility != 0 || recs[1].Mono != -1 {
		t.Errorf("<3> line read as %+v", recs[1])
	}
	recs, _ = readTestdata(t, "block-longhorn-12470-dmesg-x-delta-ctime.txt")
	if r := recs[0]; r.Priority != 3 || r.Facility != 0 || r.Time.Year() != 2026 ||
		!strings.HasPrefix(r.Message, "I/O error, dev sda") {
		t.Errorf("dmesg -x line read as %+v", r)
	}
	recs, _ = readTestdata(t, "libata-tlp-130-syslog-timeout.txt")
	if r := recs[0]; r.Mono != 375143184*time.Microsecond || r.Time.Month() != time.March || r.Time.Day() != 7 {
		t.Errorf("kern.log line read as %+v", r)
	}
	recs, _ = readTestdata(t, "kmsg-udisks-1231-nvme-fabrics.txt")
	if r := recs[3]; r.Priority != 3 || r.Seq != 892 || r.Device != "c241:1" {
		t.Errorf("kmsg record read as %+v", r)
	}
}

// journalctl -o json: MESSAGE as a string or, when it is not UTF-8, as an
// array of bytes; user-space entries are not kernel records. These entries
// are constructed with journald's field names to exercise the decoder; real
// captures are in the QEMU cases.
func TestReadSavedJournalJSON(t *testing.T) {
	in := `{"_TRANSPORT":"kernel","PRIORITY":"3","SYSLOG_FACILITY":"0","MESSAGE":"ata1: hard resetting link","_SOURCE_MONOTONIC_TIMESTAMP":"5140900","__REALTIME_TIMESTAMP":"1764613057000000","_KERNEL_DEVICE":"+scsi:2:0:0:0"}
{"_TRANSPORT":"stdout","MESSAGE":"I/O error, dev sdb, sector 1"}
{"_TRANSPORT":"kernel","MESSAGE":[97,116,97,49,58,32,255]}
`
	recs, format, err := readAll(t, in)
	if err != nil || format != FormatJournalJSON || len(recs) != 2 {
		t.Fatalf("format %q, %d records, err %v", format, len(recs), err)
	}
	r := recs[0]
	if r.Priority != 3 || r.Mono != 5140900*time.Microsecond || r.Device != "+scsi:2:0:0:0" ||
		r.Time.Unix() != 1764613057 || r.Message != "ata1: hard resetting link" {
		t.Errorf("got %+v", r)
	}
	if recs[1].Message != "ata1: \xff" || recs[1].Priority != -1 {
		t.Errorf("byte-array message read as %+v", recs[1])
	}
}

// Bare text is a record only when it is about a disk.
func TestReadSavedPlainLines(t *testing.T) {
	recs, format, err := readAll(t, "some prose about the problem\nata3: hard resetting link\n")
	if err != nil || format != FormatPlain || len(recs) != 1 {
		t.Fatalf("format %q, %d records, err %v", format, len(recs), err)
	}
}

// Hostile lines (all '[', all "[+0.1] ", all '<') cost their length, not
// its square: 64 lines of 64 KiB read in well under a second.
func TestReadSavedHostileLinesAreCheap(t *testing.T) {
	var sb strings.Builder
	for _, unit := range []string{"[", "[+0.1] ", "<", "[Jan13 04:31] ", "sd 1:0:0:0: [", "ata1: SError: { "} {
		for range 10 {
			sb.WriteString(strings.Repeat(unit, MaxLine/len(unit)))
			sb.WriteByte('\n')
		}
	}
	start := time.Now()
	_, _, _ = readAll(t, sb.String())
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// BenchmarkReadSavedJournal reads the real five-way capture's journal text
// (the format rules eval sees most) and classifies every record.
func BenchmarkReadSavedJournal(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "captured", "zfs-2.3.2", "l4-read-errors.journalctl-k.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ReadSaved(bytes.NewReader(data), func(r Record) error {
			Classify(r.Message)
			return nil
		})
	}
}
