package kernlog

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedFiles adds every real log under testdata/kernel-log to a corpus.
func seedFiles(f *testing.F, add func(data []byte)) {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "kernel-log", "*.txt"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files: %v", err)
	}
	for _, pattern := range []string{"l*.kmsg.txt", "l*.dmesg*.txt", "l*.journalctl-k*"} {
		captured, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "captured", "zfs-2.3.2", pattern))
		paths = append(paths, captured...)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(data)
	}
}

func FuzzParseKmsg(f *testing.F) {
	f.Add([]byte(realKmsgRecord))
	f.Add([]byte(`6,1,2,-;a\x0ab` + "\n DEVICE=b8:16\n"))
	seedFiles(f, func(data []byte) { f.Add(data) })
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := ParseKmsg(b)
		if err != nil {
			if rec != (Record{}) {
				t.Errorf("error %v with a record %+v", err, rec)
			}
			return
		}
		if rec.Priority < 0 || rec.Priority > 7 || rec.Facility < 0 || rec.Mono < 0 {
			t.Errorf("out of range: %+v", rec)
		}
		if len(rec.Message) > len(b) {
			t.Errorf("message longer than the record")
		}
	})
}

func FuzzReadSaved(f *testing.F) {
	seedFiles(f, func(data []byte) { f.Add(data) })
	f.Add([]byte(`{"MESSAGE":[73,47,79],"_TRANSPORT":"kernel","PRIORITY":"3"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		lines := bytes.Count(b, []byte{'\n'}) + 1
		n := 0
		format, err := ReadSaved(bytes.NewReader(b), func(r Record) error {
			n++
			if len(r.Message) > MaxLine {
				t.Errorf("message of %d bytes", len(r.Message))
			}
			return nil
		})
		if n > lines {
			t.Errorf("%d records from %d lines", n, lines)
		}
		if (err == ErrNotKernelLog) != (n == 0) {
			t.Errorf("%d records, error %v", n, err)
		}
		if err == nil && !slices.Contains(allFormats, format) {
			t.Errorf("format %q", format)
		}
	})
}

var allFormats = []Format{FormatKmsg, FormatDmesg, FormatDmesgTime, FormatJournal, FormatJournalJSON, FormatSyslog, FormatPlain}

func FuzzClassify(f *testing.F) {
	seedFiles(f, func(data []byte) {
		for _, line := range strings.Split(string(data), "\n") {
			if rec, _, ok := parseSavedLine(line); ok {
				f.Add(rec.Message)
			}
		}
	})
	f.Fuzz(func(t *testing.T, msg string) {
		got, ok := Classify(msg)
		if !ok {
			if got != (Finding{}) {
				t.Errorf("no finding but %+v", got)
			}
			return
		}
		if !slices.Contains(Kinds(), got.Kind) || got.Ref.Name == "" || got.Sector < -1 {
			t.Errorf("bad finding %+v", got)
		}
		// The name is the message's own text (a partition's whole disk is
		// a prefix of it), never made up.
		if !strings.Contains(msg, got.Ref.Name) {
			t.Errorf("ref %q is not in %q", got.Ref.Name, msg)
		}
		if utf8.ValidString(msg) && !utf8.ValidString(got.Op) {
			t.Errorf("op %q", got.Op)
		}
	})
}
