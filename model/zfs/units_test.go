package zfs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A line reader over captured output sizes its buffer to that output;
// lines are the same whatever the buffer, also lines longer than it.
func TestLineReaderBufferSize(t *testing.T) {
	long := strings.Repeat("x", 3*lineReaderSize+7)
	input := "short\r\n" + long + "\n\nlast without newline"
	want := []string{"short", long, "", "last without newline"}
	readers := map[string]func() io.Reader{
		"sized":    func() io.Reader { return strings.NewReader(input) },
		"stream":   func() io.Reader { return io.MultiReader(strings.NewReader(input)) },
		"tiny":     func() io.Reader { return bytes.NewReader([]byte("a\nb")) },
		"bytes, 0": func() io.Reader { return bytes.NewReader(nil) },
	}
	wants := map[string][]string{"tiny": {"a", "b"}, "bytes, 0": nil}
	for name, open := range readers {
		expect, ok := wants[name]
		if !ok {
			expect = want
		}
		var got []string
		lr := newLineReader(open())
		for line, ok := lr.next(); ok; line, ok = lr.next() {
			got = append(got, line)
		}
		if lr.err != io.EOF && lr.err != nil {
			t.Fatalf("%s: %v", name, lr.err)
		}
		if strings.Join(got, "|") != strings.Join(expect, "|") || len(got) != len(expect) {
			t.Errorf("%s: got %d lines %.40q, want %d", name, len(got), got, len(expect))
		}
		var gotBytes []string
		lr = newLineReader(open())
		for line, ok := lr.nextBytes(); ok; line, ok = lr.nextBytes() {
			gotBytes = append(gotBytes, string(line))
		}
		if strings.Join(gotBytes, "|") != strings.Join(expect, "|") {
			t.Errorf("%s: nextBytes got %d lines, want %d", name, len(gotBytes), len(expect))
		}
	}
	if got := newLineReader(strings.NewReader("fast\tONLINE\n")).br.Size(); got != 16 {
		t.Errorf("buffer for 12 bytes: %d, want bufio's floor 16", got)
	}
	if got := newLineReader(io.MultiReader()).br.Size(); got != lineReaderSize {
		t.Errorf("buffer for a stream: %d, want %d", got, lineReaderSize)
	}
}

// BenchmarkParseList is one `zpool list -Hp` poll's parse: the real
// capture of two pools (testdata/captured/zfs-2.3.2/a.zpool-list-Hp.txt).
func BenchmarkParseList(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(repoTestdata, "captured", "zfs-2.3.2", "a.zpool-list-Hp.txt"))
	if err != nil {
		b.Skip("capture missing:", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		pools, err := ParseListColumns(bytes.NewReader(data), DefaultListColumns)
		if err != nil || len(pools) != 2 {
			b.Fatal(len(pools), err)
		}
	}
}
